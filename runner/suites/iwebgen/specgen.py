"""Specifications from papers (I-WebGenBench §3.1, C.1): a PDF's text, a `spec_writer` model role, an AppSpec.

The paper's pipeline prompts a model with a paper and gets an interaction specification: the key scientific
concepts, dynamic processes and parameter-dependent behaviours, as controllable parameters, dynamic
components and expected responses (§3.1). Here the PDF's text is extracted with pypdf, the spec writer
answers with JSON in the suite's specification format (runner/suites/iwebgen/spec.py), which is validated
(a malformed answer is retried with the validation errors) and written to a review folder. §3.1 has every
generated specification reviewed by experts before it is kept, so nothing here adds it to the suite's tasks:
a person moves a reviewed file into tasks/iwebgen/specs/.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pypdf import PdfReader
from pypdf.errors import PdfReadError

from runner.errors import UserError
from runner.models.base import Model
from runner.models.structured import StructuredMode, StructuredOutputError, ask_structured
from runner.suites.iwebgen.spec import DOMAINS, MAX_INTERACTIONS, MIN_INTERACTIONS, AppSpec, dump_spec

__all__ = ["DEFAULT_MAX_CHARS", "SPEC_WRITER_PROMPT", "SpecDraft", "SpecgenError", "extract_pdf_text",
           "review_path", "write_spec"]

# How much of the paper's text the writer reads; the paper hands the model the whole PDF (C.1), a text model
# has a context limit: an explicit option (`--max-chars`), the cut stated in the request.
DEFAULT_MAX_CHARS = 100_000

SPEC_WRITER_PROMPT = f"""\
You are an expert researcher and an educational UX designer. From a scientific paper, design an interactive \
web application that lets a student explore the paper's central ideas, and write its specification.

Read the paper and find its key scientific concepts, its dynamic processes and its parameter-dependent \
behaviours. Turn them into {MIN_INTERACTIONS} to {MAX_INTERACTIONS} core interaction elements; each one names \
the parameters the user controls (with a control type and, for numbers, a range and a default), the \
components that change on screen, and the responses a correct implementation must show, stated concretely \
enough to check (which way a curve moves, what a button resets). Stay scientifically faithful to the paper: \
no concept it does not support. Describe what the application does, not how to code it.

Also give: `domain`, one of {", ".join(DOMAINS)}; `paper_title`, the paper's title exactly; a short lower-case \
`id` (letters, digits, '-', e.g. "bio-lotka-volterra"); a one- or two-sentence `summary`; `visual_style` \
(theme, palette, layout, notes); `tech_stack`: a single-page React app built with Vite, charts drawn with SVG \
or canvas, no chart libraries, no CDNs, no network requests.

Answer with one JSON object only, matching the schema you are given."""


class SpecgenError(RuntimeError, UserError):
    """The PDF could not be read, or the writer gave no valid specification (the message names the file)."""


@dataclass(frozen=True)
class SpecDraft:
    spec: AppSpec
    attempts: int  # writer answers it took (a malformed one is retried with its errors)
    source_chars: int  # characters of the paper's text the writer read
    cut: bool  # the text was longer than the limit


def extract_pdf_text(path: Path | str) -> str:
    """The text of every page, in order (pypdf); a PDF without extractable text is an error naming it."""
    path = Path(path)
    try:
        reader = PdfReader(path)
        pages = [page.extract_text() or "" for page in reader.pages]
    except (OSError, PdfReadError, ValueError) as error:
        raise SpecgenError(f"{path}: cannot read the PDF: {error}") from None
    text = "\n\n".join(page.strip() for page in pages if page.strip())
    if not text:
        raise SpecgenError(f"{path}: no extractable text in {len(pages)} page(s) (a scanned PDF needs OCR first)")
    return text


async def write_spec(model: Model, pdf: Path | str, *, text: str | None = None, max_chars: int = DEFAULT_MAX_CHARS,
                     mode: StructuredMode = "json_schema", max_attempts: int = 3) -> SpecDraft:
    """Ask the spec writer for the specification of the paper in `pdf` (`text`: its text, when extracted
    already); validated against AppSpec."""
    pdf = Path(pdf)
    text = extract_pdf_text(pdf) if text is None else text
    cut = len(text) > max_chars
    shown = text[:max_chars]
    note = f" (its first {max_chars} of {len(text)} characters)" if cut else ""
    messages = [
        {"role": "system", "content": SPEC_WRITER_PROMPT},
        {"role": "user", "content": f"The paper's text, extracted from {pdf.name}{note}:\n\n{shown}"},
    ]
    try:
        result = await ask_structured(model, messages=messages, answer=AppSpec, name="app_spec", mode=mode,
                                      max_attempts=max_attempts, task_id=f"specgen:{pdf.stem}", turn=1)
    except StructuredOutputError as error:
        raise SpecgenError(f"{pdf}: the spec writer gave no valid specification in {max_attempts} answer(s):\n  "
                           + "\n  ".join(error.errors)) from None
    return SpecDraft(spec=result.value, attempts=result.attempts, source_chars=len(shown), cut=cut)


def review_path(out_dir: Path | str, spec: AppSpec, *, tasks_dir: Path | None = None) -> Path:
    """Where the draft goes for review: `<out_dir>/<id>.yaml`, never over an earlier draft and never inside the
    suite's own task folder (a specification joins the suite only after review, §3.1)."""
    path = Path(out_dir).resolve() / f"{spec.id}.yaml"
    if tasks_dir is not None and Path(tasks_dir).resolve() in path.parents:
        raise SpecgenError(f"{path}: inside the suite's tasks ({tasks_dir}); write drafts elsewhere and move a "
                           f"reviewed one there yourself")
    if path.exists():
        raise SpecgenError(f"{path}: a draft with this id exists already; review or remove it first")
    return path


def save_draft(draft: SpecDraft, pdf: Path, out_dir: Path, *, tasks_dir: Path | None = None) -> Path:
    """Write the draft (YAML) and, beside it, where it came from (`<id>.source.json`)."""
    path = dump_spec(draft.spec, review_path(out_dir, draft.spec, tasks_dir=tasks_dir))
    source = {"pdf": str(pdf.resolve()), "writer_answers": draft.attempts, "text_chars": draft.source_chars,
              "text_cut": draft.cut}
    path.with_suffix(".source.json").write_text(json.dumps(source, indent=2) + "\n", encoding="utf-8")
    return path
