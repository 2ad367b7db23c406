#!/usr/bin/env python3
"""Screenshot a validation report (report.html) with headless Chromium and say what the picture shows.

    scripts/report_screenshot.py results/<pod>/latest            -> results/<pod>/latest/report.png
    scripts/report_screenshot.py path/to/report.html --out x.png [--width 1400] [--height 3600]

The report is self-contained (inline SVG, no network), so the browser runs offline with a throw-away
profile. After the shot the PNG is read (Pillow) and checked for the report's plot colours: the
pair-throughput heatmaps (filled red-to-green cells), the fio scaling line
(blue, #1565c0) and its expectation line (orange, #ef6c00). Exit 0 when the PNG was written and is not
blank; 1 when no browser is installed or the shot failed; 2 when the picture lacks a plot the report
should have (--expect heatmap,fio).
Browsers tried, in order: $CHROMIUM, chromium-headless-shell (Debian 12 package, setup.sh installs
it), chromium, google-chrome.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional, Tuple

from PIL import Image

BROWSERS = ("chromium-headless-shell", "chromium", "google-chrome")
BLUE = (0x15, 0x65, 0xC0)    # fio measured line
ORANGE = (0xEF, 0x6C, 0x00)  # expectation line (and the SIMULATED banner's border)


def find_browser() -> Optional[str]:
    if os.environ.get("CHROMIUM"):
        return os.environ["CHROMIUM"]
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def browser_argv(browser: str, url: str, out: str, width: int, height: int, profile: str) -> List[str]:
    argv = [browser]
    if not os.path.basename(browser).startswith("chromium-headless-shell"):
        argv.append("--headless=new")
    argv += ["--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
             "--user-data-dir=" + profile, "--window-size=%d,%d" % (width, height),
             "--screenshot=" + out, url]
    return argv


# ------------------------------------------------------------------------------------------ picture

def _saturated(px: Tuple[int, int, int]) -> bool:
    return max(px) - min(px) >= 60


def picture_summary(image, step: int = 2, solid: int = 4) -> Dict[str, object]:
    """What a report screenshot (a PIL image) shows: size, how far down there is content, and pixel
    counts of the plot colours, looking at every `step`-th pixel of every `step`-th row. Heatmap cells
    are filled squares: a saturated pixel counts only when the pixels `solid` px right and below have
    the same colour, so coloured text (pass/fail in the tables) is not mistaken for a heatmap."""
    img = image.convert("RGB")
    width, height = img.size
    px = img.load()
    near = lambda a, b: all(abs(a[i] - b[i]) <= 24 for i in range(3))  # noqa: E731
    counts = {"heatmap_cells": 0, "fio_line": 0, "expectation_line": 0, "non_white": 0}
    last_content_row = 0
    for y in range(0, height, step):
        content = False
        for x in range(0, width, step):
            p = px[x, y]
            if min(p) >= 245:
                continue
            counts["non_white"] += 1
            content = True
            if near(p, BLUE):
                counts["fio_line"] += 1
            elif near(p, ORANGE):
                counts["expectation_line"] += 1
            if (_saturated(p) and x + solid < width and y + solid < height
                    and px[x + solid, y] == p and px[x, y + solid] == p and px[x + solid, y + solid] == p):
                counts["heatmap_cells"] += 1
        if content:
            last_content_row = y
    return {"width": width, "height": height, "content_height": last_content_row + 1, **counts}


def shows(summary: Dict[str, object]) -> Dict[str, bool]:
    """Which plots the picture shows (a heatmap cell is some 26x26 px, a plotted line some 100s of px)."""
    return {"heatmap": int(summary["heatmap_cells"]) >= 100,
            "fio": int(summary["fio_line"]) >= 20 and int(summary["expectation_line"]) >= 20}


def screenshot(html: str, out: str, width: int = 1400, height: int = 3600, timeout: int = 120) -> str:
    browser = find_browser()
    if not browser:
        raise RuntimeError("no headless browser found (tried $CHROMIUM, %s); Debian: apt-get install "
                           "chromium-headless-shell" % ", ".join(BROWSERS))
    with tempfile.TemporaryDirectory(prefix="report-shot-") as profile:
        argv = browser_argv(browser, "file://" + os.path.abspath(html), os.path.abspath(out), width, height, profile)
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            raise RuntimeError("%s did not finish within %d s" % (browser, timeout)) from None
    if p.returncode != 0 or not os.path.exists(out):
        raise RuntimeError("%s failed (rc %d): %s" % (browser, p.returncode, p.stderr.strip()[-500:]))
    return browser


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report", help="report.html, or a results directory holding one")
    ap.add_argument("--out", help="PNG to write (default: report.png next to report.html)")
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--height", type=int, default=3600)
    ap.add_argument("--expect", default="", help="comma list of plots the picture must show: heatmap,fio")
    args = ap.parse_args(argv)
    html = os.path.join(args.report, "report.html") if os.path.isdir(args.report) else args.report
    if not os.path.isfile(html):
        print("report_screenshot: no such report: %s" % html, file=sys.stderr)
        return 1
    out = args.out or os.path.join(os.path.dirname(os.path.abspath(html)), "report.png")
    try:
        browser = screenshot(html, out, args.width, args.height)
        with Image.open(out) as img:
            summary = picture_summary(img)
    except (RuntimeError, OSError) as e:
        print("report_screenshot: %s" % e, file=sys.stderr)
        return 1
    seen = shows(summary)
    print("%s: %dx%d by %s; content down to row %d; heatmap %s, fio plot %s" % (
        out, summary["width"], summary["height"], os.path.basename(browser), summary["content_height"],
        "yes" if seen["heatmap"] else "no", "yes" if seen["fio"] else "no"))
    if not summary["non_white"]:
        print("report_screenshot: the picture is blank", file=sys.stderr)
        return 1
    missing = [p for p in args.expect.split(",") if p and not seen.get(p)]
    if missing:
        print("report_screenshot: the picture does not show: %s" % ", ".join(missing), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
