"""Small pages nobody in the project wrote for the trajectory and suite tests (odd shapes on purpose)."""

from __future__ import annotations

from pathlib import Path

SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="80" height="60"><rect width="80" height="60" fill="#4a7"/></svg>'

# Four stacked sections, a table with inline styles, a CSS background image: enough for T=2 of both tracks.
CLUB_HTML = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Chess club</title><link rel="stylesheet" href="club.css"></head>
<body>
<header class="top"><h1>Riverside Chess Club</h1><p>Tuesdays and Fridays since 1971.</p></header>
<section class="news"><h2>News</h2><p>The spring open starts on the 4th of April. Bring your own clock.</p>
  <p style="color:#7a2e2e;font-style:italic">Juniors play free this month.</p><img src="pics/board.svg" alt="board" width="80" height="60"></section>
<section class="results"><h2>Results</h2>
  <table style="border-collapse:collapse;width:600px">
    <tr><th style="border:1px solid #333;padding:4px">Player</th><th style="border:1px solid #333;padding:4px">Points</th></tr>
    <tr><td style="border:1px solid #333;padding:4px">A. Petrov</td><td style="border:1px solid #333;padding:4px">4.5</td></tr>
    <tr><td style="border:1px solid #333;padding:4px">M. Osei</td><td style="border:1px solid #333;padding:4px">4.0</td></tr>
  </table></section>
<section class="join"><h2>Join us</h2><p>Membership is twenty pounds a year, students half.</p><a class="btn" href="#">Sign up</a></section>
<footer><p>Riverside Community Hall, Mill Lane.</p></footer>
</body></html>
"""
CLUB_CSS = """body { margin: 0; font-family: "DejaVu Sans", sans-serif; color: #222; background: #fdfcf7; }
header.top { padding: 30px 40px; background: #263238 url(pics/board.svg) no-repeat right 40px center; color: #fff; }
section { padding: 24px 40px; border-bottom: 2px solid #ddd; }
h2 { font-size: 26px; margin: 0 0 10px; }
.btn { display: inline-block; padding: 8px 18px; background: #2e7d32; color: #fff; text-decoration: none; border-radius: 4px; }
footer { padding: 20px 40px; background: #eee; font-size: 14px; }
"""

# Plain divs and headings only, no CSS file, old-style inline presentation.
NOTES_HTML = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Notes</title>
<style>body{font-family:"DejaVu Serif",serif;margin:30px 60px;background:#fff} .box{border:2px solid #556;padding:12px;margin:14px 0;width:700px}</style></head>
<body>
<nav style="background:#223;color:#eee;padding:10px 16px">Home · Notes · Contact</nav>
<article><h1 style="font-size:34px">Field notes</h1>
<div class="box"><h3>Monday</h3><p>Saw three herons by the weir and a kingfisher on the far bank.</p></div>
<div class="box"><h3>Wednesday</h3><p>Water level high after the rain; the stepping stones were under.</p></div>
<ul><li>Herons: 3</li><li>Kingfishers: 1</li><li>Otters: 0</li></ul>
</article>
<section><h2>Older notes</h2><p>See the archive for the winter counts.</p></section>
<footer style="padding:10px;color:#666">Written by hand, typed later.</footer>
</body></html>
"""

ONE_REGION_HTML = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Lonely</title></head>
<body style="margin:0;font-family:sans-serif"><section style="padding:40px"><h1>Only one region</h1>
<p>This page has a single top-level region, so nothing can be deleted with a surviving sibling.</p></section></body></html>
"""

# A page whose script draws on a canvas: the drawing is not in the DOM, so the page cannot be frozen.
SCRIPT_HTML = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Scripted</title></head>
<body><section><h1>Hello</h1></section><section><canvas id="x" width="300" height="120"></canvas></section>
<script>const g = document.getElementById('x').getContext('2d'); g.fillStyle = '#246'; g.fillRect(0, 0, 300, 120);</script>
</body></html>
"""


def write_page(root: Path, name: str, html: str, files: dict[str, str] | None = None) -> Path:
    page = root / name
    page.mkdir(parents=True, exist_ok=True)
    (page / "index.html").write_text(html)
    for rel, content in (files or {}).items():
        target = page / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    return page


def write_two_pages(root: Path) -> Path:
    """A folder with the chess-club and field-notes pages."""
    write_page(root, "chess-club", CLUB_HTML, {"club.css": CLUB_CSS, "pics/board.svg": SVG})
    write_page(root, "field-notes", NOTES_HTML)
    return root
