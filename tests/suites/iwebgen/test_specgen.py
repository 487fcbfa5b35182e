"""Specifications from papers (I-WebGenBench §3.1, C.1): a real PDF made here, its text read by pypdf, a
spec writer behind an OpenAI-compatible endpoint (scripted), the draft validated and written for review."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.suites.iwebgen.specgen_command import TASKS_DIR, main
from runner.suites.iwebgen.spec import AppSpec, load_spec
from runner.suites.iwebgen.specgen import SpecgenError, extract_pdf_text, review_path
from tests.support.fault_server import FaultServer, completion

LINES = ["Predator-prey dynamics in a two-species system",
         "The Lotka-Volterra equations couple prey growth alpha and predation beta."]


def tiny_pdf(lines: list[str]) -> bytes:
    """A one-page PDF with `lines` in Helvetica, byte offsets computed (no PDF writer library needed)."""
    escaped = [line.replace("(", "\\(").replace(")", "\\)") for line in lines]
    text = " ".join(f"({line}) '" for line in escaped)
    content = f"BT /F1 12 Tf 72 720 Td 14 TL {text} ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> "
        "/Contents 5 0 R >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        f"<< /Length {len(content)} >>\nstream\n{content}\nendstream",
    ]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{offset:010d} 00000 n \n" for offset in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


def interaction(name: str) -> dict:
    return {"name": name, "description": f"{name} of the model",
            "controllable_parameters": [{"name": "alpha", "control": "slider", "min": 0.1, "max": 2, "default": 1}],
            "dynamic_components": ["population chart"], "expected_responses": ["the prey curve rises with alpha"]}


SPEC = {"id": "bio-lotka-volterra-draft", "domain": "Biology",
        "paper_title": "Predator-prey dynamics in a two-species system",
        "interactions": [interaction("Birth rate"), interaction("Predation"), interaction("Playback")],
        "visual_style": {"theme": "light"}, "tech_stack": {"framework": "React with Vite"}}


@pytest.fixture()
def paper(tmp_path: Path) -> Path:
    path = tmp_path / "paper.pdf"
    path.write_bytes(tiny_pdf(LINES))
    return path


def test_pypdf_reads_the_papers_text(paper: Path) -> None:
    text = extract_pdf_text(paper)
    assert LINES[0] in text and "alpha and predation beta" in text
    broken = paper.with_name("broken.pdf")
    broken.write_bytes(b"not a pdf")
    with pytest.raises(SpecgenError, match=r"broken.pdf: cannot read the PDF"):
        extract_pdf_text(broken)


def test_a_paper_becomes_a_validated_draft_for_review(paper: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    too_few = {**SPEC, "interactions": SPEC["interactions"][:2]}  # §3.1: at least 3 elements

    def writer(messages: list[dict]) -> tuple[int, str]:
        corrected = any(m["role"] == "assistant" for m in messages)  # the retry after a rejected answer
        return 200, completion(json.dumps(SPEC if corrected else too_few))

    out = tmp_path / "review"
    with FaultServer(writer) as server:
        code = main([str(paper), "--out", str(out), "+model@roles.spec_writer=local-openai",
                     f"roles.spec_writer.base_url={server.base_url}", "roles.spec_writer.cache=false"])
        requests = server.requests
    assert code == 0, capsys.readouterr().err
    printed = Path(capsys.readouterr().out.strip().splitlines()[-1])
    assert printed == out.resolve() / "bio-lotka-volterra-draft.yaml"
    assert load_spec(printed) == AppSpec.model_validate(SPEC)
    assert len(requests) == 2 and "alpha and predation beta" in requests[0]["messages"][-1]["content"]
    assert "interactions" in requests[1]["messages"][-1]["content"]  # the validation error went back
    assert json.loads(printed.with_suffix(".source.json").read_text())["writer_answers"] == 2
    assert not list(TASKS_DIR.rglob("bio-lotka-volterra-draft*"))  # never added to the suite


def test_drafts_never_land_in_the_suites_tasks_or_over_an_earlier_one(tmp_path: Path) -> None:
    spec = AppSpec.model_validate(SPEC)
    with pytest.raises(SpecgenError, match="inside the suite's tasks"):
        review_path(TASKS_DIR / "specs", spec, tasks_dir=TASKS_DIR)
    (tmp_path / f"{spec.id}.yaml").write_text("earlier")
    with pytest.raises(SpecgenError, match="a draft with this id exists already"):
        review_path(tmp_path, spec)


def test_a_missing_writer_or_file_is_named(paper: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(paper), "--out", str(tmp_path)]) == 2
    assert "roles.spec_writer: the spec writer is missing; compose it from conf/model with " \
           "+model@roles.spec_writer=<name>" in capsys.readouterr().err
    assert main([str(tmp_path / "absent.pdf")]) == 2
    assert "absent.pdf: no such file" in capsys.readouterr().err
