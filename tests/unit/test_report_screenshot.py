"""scripts/report_screenshot.py: the picture check against images built here, and - where a
headless Chromium is installed (scripts/setup.sh installs chromium-headless-shell) - a real screenshot of
a rendered report that must show the heatmaps and the fio plot, and one of a report without
measurements that must not."""
from __future__ import annotations


import pytest
from PIL import Image

from perf_sample import base_results, profile, sample_context, sample_perf, sample_stages
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.results import build_results
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.render import render_html

import report_screenshot as rs  # noqa: E402


def picture(rows):
    """A PIL image from rows of (r, g, b)."""
    img = Image.new("RGB", (len(rows[0]), len(rows)))
    img.putdata([px for row in rows for px in row])
    return img


def test_summary_counts_filled_cells_and_lines_not_coloured_text():
    white, green, red, blue, orange = (255, 255, 255), (129, 228, 129), (224, 66, 66), rs.BLUE, rs.ORANGE
    rows = [[green] * 20 + [red] * 20 + [white] * 20 for _ in range(20)]        # two filled cells
    rows += [[blue] * 10 + [orange] * 10 + [white] * 40 for _ in range(2)]      # two 2-px lines
    rows += [[(46, 125, 50) if x % 3 == 0 else white for x in range(60)] for _ in range(10)]  # "pass" text
    rows += [[white] * 60 for _ in range(8)]
    s = rs.picture_summary(picture(rows), step=1)
    assert s["heatmap_cells"] == 2 * (20 - 4) * (20 - 4)  # every pixel with a same-colour pixel 4 px away
    assert s["fio_line"] == 20 and s["expectation_line"] == 20
    assert s["content_height"] == 32 and (s["width"], s["height"]) == (60, 40)
    assert rs.shows(s) == {"heatmap": True, "fio": True}
    text_only = rs.picture_summary(picture(rows[22:]), step=1)
    assert text_only["heatmap_cells"] == 0 and text_only["non_white"] > 0
    assert rs.shows(text_only) == {"heatmap": False, "fio": False}


def test_missing_report_is_a_clear_error(tmp_path, capsys):
    assert rs.main([str(tmp_path)]) == 1
    assert "no such report" in capsys.readouterr().err


browser = pytest.mark.skipif(not rs.find_browser(), reason="no headless Chromium (scripts/setup.sh installs it)")


@browser
def test_screenshot_of_a_report_shows_heatmaps_and_fio_plot(tmp_path, capsys):
    perf = sample_perf()
    results = build_results(base_results(True), sample_context(perf), profile()["expectations"], sample_stages(perf))
    (tmp_path / "report.html").write_text(render_html(results))
    assert rs.main([str(tmp_path), "--expect", "heatmap,fio"]) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    assert "heatmap yes, fio plot yes" in out
    assert (tmp_path / "report.png").stat().st_size > 10000


@browser
def test_screenshot_of_a_report_without_measurements_shows_no_plot(tmp_path, capsys):
    (tmp_path / "report.html").write_text(render_html(build_results(base_results(False), {}, {}, sample_stages())))
    assert rs.main([str(tmp_path), "--expect", "heatmap"]) == 2
    assert "does not show: heatmap" in capsys.readouterr().err
