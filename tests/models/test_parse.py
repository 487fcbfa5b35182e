"""The output-contract parser on the shapes models actually produce, and on malformed ones."""

from __future__ import annotations

import json

import pytest

from runner.models.parse import (
    InvalidOutput,
    extract_markdown_files,
    normalize_path,
    parse_model_output,
    render_json_output,
    strip_thinking,
)

APP = 'export default function App() {\n  return <h1 className="x">{"hi"}</h1>;\n}\n'
FENCE = "```"


# ----------------------------------------------------------------------------- JSON


def test_plain_json_object():
    raw = json.dumps({"assistant_text": "Built it.", "files": {"src/App.jsx": APP}})
    out = parse_model_output(raw)
    assert out.assistant_text == "Built it."
    assert out.files == {"src/App.jsx": APP}


def test_json_files_as_list():
    raw = json.dumps(
        {
            "assistant_text": "Two files.",
            "files": [{"path": "src/App.jsx", "content": APP}, {"path": "src/a.css", "content": ""}],
        }
    )
    out = parse_model_output(raw)
    assert out.files == {"src/App.jsx": APP, "src/a.css": ""}


def test_json_inside_fence_with_prose():
    body = json.dumps({"assistant_text": "Done", "files": {"./src/App.jsx": APP}}, indent=2)
    raw = f"Sure! Here is the result:\n\n{FENCE}json\n{body}\n{FENCE}\n\nLet me know."
    out = parse_model_output(raw)
    assert out.files == {"src/App.jsx": APP}
    assert out.assistant_text == "Done"


def test_json_without_assistant_text_uses_surrounding_prose():
    body = json.dumps({"files": {"src/App.jsx": APP}})
    raw = f"I added a header.\n{FENCE}json\n{body}\n{FENCE}\n"
    out = parse_model_output(raw)
    assert out.assistant_text == "I added a header."
    assert "src/App.jsx" in out.files


def test_json_with_raw_newlines_in_strings_is_tolerated():
    raw = '{"assistant_text": "ok", "files": {"src/App.jsx": "line1\nline2\n"}}'
    assert parse_model_output(raw).files["src/App.jsx"] == "line1\nline2\n"


def test_json_nested_in_wrapper_object():
    raw = json.dumps({"response": {"assistant_text": "w", "files": {"src/App.jsx": APP}}})
    out = parse_model_output(raw)
    assert out.assistant_text == "w" and out.files == {"src/App.jsx": APP}


def test_json_content_with_backtick_fences_inside():
    readme = f"# Title\n\n{FENCE}bash\nnpm run dev\n{FENCE}\n"
    body = json.dumps({"assistant_text": "t", "files": {"README.md": readme, "src/App.jsx": APP}})
    raw = f"{FENCE}json\n{body}\n{FENCE}"
    assert parse_model_output(raw).files["README.md"] == readme


def test_json_empty_files_is_invalid():
    with pytest.raises(InvalidOutput, match="empty 'files'"):
        parse_model_output('{"assistant_text": "nothing", "files": {}}')


def test_json_malformed_files_shape_is_invalid_with_reason():
    with pytest.raises(InvalidOutput, match="not a string"):
        parse_model_output('{"assistant_text": "x", "files": {"src/App.jsx": 42}}')
    with pytest.raises(InvalidOutput, match="object or a list"):
        parse_model_output('{"assistant_text": "x", "files": "src/App.jsx"}')


def test_truncated_json_is_invalid_and_says_so():
    raw = '{"assistant_text": "x", "files": {"src/App.jsx": "export default'
    with pytest.raises(InvalidOutput) as info:
        parse_model_output(raw)
    assert "did not parse" in info.value.reason
    assert info.value.raw == raw


def test_package_json_file_with_files_key_is_not_mistaken_for_contract():
    pkg = json.dumps({"name": "x", "files": ["dist"]}, indent=2)
    raw = f"Here.\n\n### package.json\n{FENCE}json\n{pkg}\n{FENCE}\n\n### src/App.jsx\n{FENCE}jsx\n{APP}{FENCE}\n"
    out = parse_model_output(raw)
    assert set(out.files) == {"package.json", "src/App.jsx"}
    assert json.loads(out.files["package.json"])["files"] == ["dist"]


def test_render_json_output_roundtrips():
    files = {"src/App.jsx": APP, "src/index.css": "body{}\n"}
    out = parse_model_output(render_json_output("Reference.", files))
    assert out == type(out)("Reference.", files)


# ----------------------------------------------------------------------------- markdown


@pytest.mark.parametrize(
    "label",
    [
        "### src/App.jsx",
        "## File: src/App.jsx",
        "**src/App.jsx**",
        "`src/App.jsx`",
        "**File:** `src/App.jsx`",
        "### File: `src/App.jsx`",
        "src/App.jsx:",
        "- **src/App.jsx**",
        "### 1. src/App.jsx (updated)",
        "#### ./src/App.jsx",
    ],
)
def test_markdown_label_lines(label):
    raw = f"I rewrote the app.\n\n{label}\n{FENCE}jsx\n{APP}{FENCE}\n"
    out = parse_model_output(raw)
    assert out.files == {"src/App.jsx": APP}
    assert out.assistant_text == "I rewrote the app."


@pytest.mark.parametrize(
    "info",
    [
        "jsx src/App.jsx",
        'jsx title="src/App.jsx"',
        "jsx filename=src/App.jsx",
        "jsx:src/App.jsx",
        "src/App.jsx",
        "jsx path='src/App.jsx'",
    ],
)
def test_markdown_fence_info_paths(info):
    raw = f"Prose first.\n{FENCE}{info}\n{APP}{FENCE}\nProse after."
    out = parse_model_output(raw)
    assert out.files == {"src/App.jsx": APP}
    assert out.assistant_text == "Prose first.\nProse after."


def test_multiple_files_and_prose_between():
    raw = (
        "Summary of changes.\n\n"
        f"### src/App.jsx\n{FENCE}jsx\n{APP}{FENCE}\n\n"
        "The styles are new too.\n\n"
        f"### src/App.css\n{FENCE}css\n.x {{ color: red; }}\n{FENCE}\n\n"
        "Run it with:\n"
        f"{FENCE}bash\nnpm run dev\n{FENCE}\n"
    )
    out = parse_model_output(raw)
    assert out.files == {"src/App.jsx": APP, "src/App.css": ".x { color: red; }\n"}
    # unnamed blocks are prose; file labels are not
    assert out.assistant_text.startswith("Summary of changes.")
    assert "The styles are new too." in out.assistant_text
    assert "npm run dev" in out.assistant_text
    assert "### src/App.jsx" not in out.assistant_text


def test_label_with_description_line_between():
    raw = f"### src/App.jsx\nThe main component:\n{FENCE}jsx\n{APP}{FENCE}\n"
    out = parse_model_output(raw)
    assert out.files == {"src/App.jsx": APP}
    assert out.assistant_text == "The main component:"


def test_explicit_assistant_text_line():
    raw = (
        "assistant_text: Added a dark mode toggle.\n\n"
        f"### src/App.jsx\n{FENCE}jsx\n{APP}{FENCE}\n\nSome trailing note the model added.\n"
    )
    out = parse_model_output(raw)
    assert out.assistant_text == "Added a dark mode toggle."


def test_explicit_assistant_heading_section():
    raw = (
        "## Assistant\nI added the chart.\nIt reads from the API.\n\n"
        "## Files\n"
        f"### src/App.jsx\n{FENCE}jsx\n{APP}{FENCE}\n"
    )
    out = parse_model_output(raw)
    assert out.assistant_text == "I added the chart.\nIt reads from the API."
    assert out.files == {"src/App.jsx": APP}


def test_files_heading_is_dropped_from_prose():
    raw = f"Done.\n\n## Files\n\n### src/App.jsx\n{FENCE}jsx\n{APP}{FENCE}\n"
    assert parse_model_output(raw).assistant_text == "Done."


def test_longer_outer_fence_keeps_nested_backticks():
    readme = f"# App\n\n{FENCE}bash\nnpm i\n{FENCE}\n"
    raw = f"### README.md\n````markdown\n{readme}````\n### src/App.jsx\n{FENCE}jsx\n{APP}{FENCE}\n"
    out = parse_model_output(raw)
    assert out.files["README.md"] == readme
    assert out.files["src/App.jsx"] == APP


def test_equal_length_nested_fences_are_balanced():
    readme = f"# App\n\n{FENCE}bash\nnpm i\n{FENCE}\n\nMore text.\n"
    raw = f"### README.md\n{FENCE}markdown\n{readme}{FENCE}\n"
    assert parse_model_output(raw).files["README.md"] == readme


def test_tilde_fences():
    raw = f"### src/App.jsx\n~~~jsx\n{APP}~~~\n"
    assert parse_model_output(raw).files == {"src/App.jsx": APP}


def test_crlf_line_endings():
    raw = f"Hello.\r\n\r\n### src/App.jsx\r\n{FENCE}jsx\r\n{APP.replace(chr(10), chr(13) + chr(10))}{FENCE}\r\n"
    out = parse_model_output(raw)
    assert out.files == {"src/App.jsx": APP}
    assert out.assistant_text == "Hello."


def test_indented_fence_in_list_item_is_dedented():
    raw = "1. **src/App.jsx**\n   ```jsx\n   const a = 1;\n     nested();\n   ```\n"
    assert parse_model_output(raw).files == {"src/App.jsx": "const a = 1;\n  nested();\n"}


def test_unclosed_fence_runs_to_end():
    raw = f"### src/App.jsx\n{FENCE}jsx\nconst a = 1;\n"
    assert parse_model_output(raw).files == {"src/App.jsx": "const a = 1;\n"}


def test_later_section_for_same_path_wins():
    raw = f"### src/App.jsx\n{FENCE}jsx\nold\n{FENCE}\n### src/App.jsx\n{FENCE}jsx\nnew\n{FENCE}\n"
    assert parse_model_output(raw).files == {"src/App.jsx": "new\n"}


def test_info_path_wins_over_different_label():
    raw = f"### Component\n{FENCE}jsx src/B.jsx\nb\n{FENCE}\n"
    out = parse_model_output(raw)
    assert out.files == {"src/B.jsx": "b\n"}
    assert out.assistant_text == "### Component"


def test_heading_that_is_not_a_path_does_not_name_a_block():
    raw = f"### Usage\n{FENCE}bash\nnpm run dev\n{FENCE}\n"
    with pytest.raises(InvalidOutput, match="none names a file path"):
        parse_model_output(raw)


def test_label_does_not_reach_across_other_headings():
    raw = f"### src/App.jsx\n## How to run\n{FENCE}bash\nnpm run dev\n{FENCE}\n"
    with pytest.raises(InvalidOutput):
        parse_model_output(raw)


def test_default_path_for_single_unnamed_block():
    raw = f"Here is the app:\n{FENCE}jsx\n{APP}{FENCE}\n"
    with pytest.raises(InvalidOutput):
        parse_model_output(raw)
    out = parse_model_output(raw, default_path="src/App.jsx")
    assert out.files == {"src/App.jsx": APP}


def test_prose_mentioning_a_path_is_not_a_label():
    raw = f"I changed src/App.jsx to add a button.\n{FENCE}jsx\n{APP}{FENCE}\n"
    with pytest.raises(InvalidOutput):
        parse_model_output(raw)


# ----------------------------------------------------------------------------- thinking, empties


def test_think_block_is_stripped():
    raw = "<think>\nMaybe ### src/Wrong.jsx\n```jsx\nwrong\n```\n</think>\n" + json.dumps(
        {"assistant_text": "ok", "files": {"src/App.jsx": APP}}
    )
    out = parse_model_output(raw)
    assert out.files == {"src/App.jsx": APP}


def test_stray_closing_think_tag_drops_reasoning_before_it():
    raw = f"reasoning without an opening tag\n</think>\n\nDone.\n### src/App.jsx\n{FENCE}jsx\n{APP}{FENCE}\n"
    out = parse_model_output(raw)
    assert out.assistant_text == "Done."


def test_unclosed_think_only_is_empty():
    with pytest.raises(InvalidOutput, match="thinking"):
        parse_model_output("<think>I am still thinking about the layout")


def test_strip_thinking_variants():
    assert strip_thinking("<THINKING>x</THINKING>answer") == "answer"
    assert strip_thinking("a<think>x</think>b<think>y</think>c") == "abc"


@pytest.mark.parametrize("raw", [None, "", "   ", "\n\r\n\t"])
def test_empty_responses(raw):
    with pytest.raises(InvalidOutput) as info:
        parse_model_output(raw)
    assert info.value.reason == "empty response"


def test_prose_only_is_invalid():
    with pytest.raises(InvalidOutput, match="no parsable files"):
        parse_model_output("I cannot help with that.")


def test_garbage_is_invalid():
    with pytest.raises(InvalidOutput):
        parse_model_output('{{{{ ``` ]]] {"a": [1, 2')


# ----------------------------------------------------------------------------- paths and helpers


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("./src/App.jsx", "src/App.jsx"),
        ("././src//App.jsx", "src/App.jsx"),
        ("/etc/passwd", "/etc/passwd"),  # kept: the sandbox rejects it visibly
        ("../outside.js", "../outside.js"),
        ("src\\components\\A.jsx", "src/components/A.jsx"),
        ("  `src/App.jsx`  ", "src/App.jsx"),
        ("src/./x/App.jsx", "src/x/App.jsx"),
    ],
)
def test_normalize_path(raw, expected):
    assert normalize_path(raw) == expected


def test_absolute_and_parent_paths_survive_parsing():
    raw = json.dumps({"assistant_text": "x", "files": {"/abs.js": "a", "../up.js": "b"}})
    assert set(parse_model_output(raw).files) == {"/abs.js", "../up.js"}
    md = f"### /etc/evil.js\n{FENCE}js\nx\n{FENCE}\n"
    assert set(parse_model_output(md).files) == {"/etc/evil.js"}


def test_extract_markdown_files_returns_empty_when_none():
    assert extract_markdown_files("just words") == ("just words", {})


def test_large_input_with_many_braces_is_fast():
    import time

    code = 'const o = {"a": 1};\n' * 5000
    raw = f"### src/App.jsx\n{FENCE}jsx\n{code}{FENCE}\n"
    t0 = time.perf_counter()
    out = parse_model_output(raw)
    assert out.files["src/App.jsx"] == code
    assert time.perf_counter() - t0 < 2.0


@pytest.mark.parametrize(
    "first_line", ["// src/App.jsx", "// filepath: src/App.jsx", "/* src/App.jsx */", "{/* File: src/App.jsx */}"]
)
def test_path_in_first_line_comment_is_kept_in_content(first_line):
    raw = f"Here you go.\n{FENCE}jsx\n{first_line}\n{APP}{FENCE}\n"
    out = parse_model_output(raw)
    assert out.files == {"src/App.jsx": f"{first_line}\n{APP}"}
    assert out.assistant_text == "Here you go."


def test_ordinary_first_line_comment_is_not_a_path():
    raw = f"{FENCE}js\n// just a comment about App.jsx usage\nx()\n{FENCE}\n"
    with pytest.raises(InvalidOutput):
        parse_model_output(raw)


def test_json_data_inside_a_named_file_is_not_the_contract():
    data = 'const demo = {"files": [{"name": "notes.txt", "content": "hello"}]};\n'
    raw = f"A file browser.\n\n### src/App.jsx\n{FENCE}jsx\n{data}{FENCE}\n"
    out = parse_model_output(raw)
    assert out.files == {"src/App.jsx": data}


def test_evogenui_bench_output_contract():
    """EvoGenUI-Bench's generator answers `assistant_text:` then `#### \\`path\\`` sections (its prompt's template)."""
    raw = (
        "assistant_text: The ledger now restocks items and shows the saved counts.\n"
        "Use Restock to add units.\n\n"
        "#### `src/App.tsx`\n```tsx\nimport { callTool } from './genui/toolClient'\n"
        "export default function App() { return <main>Ledger</main> }\n```\n\n"
        "#### `src/components/Row.tsx`\n```tsx\nexport function Row() { return <li /> }\n```\n"
    )
    parsed = parse_model_output(raw)
    assert parsed.assistant_text == "The ledger now restocks items and shows the saved counts.\nUse Restock to add units."
    assert parsed.files == {
        "src/App.tsx": "import { callTool } from './genui/toolClient'\nexport default function App() { return <main>Ledger</main> }\n",
        "src/components/Row.tsx": "export function Row() { return <li /> }\n",
    }
