"""tests/conftest.py's test-run policy: the opt-in markers (slow, fuzz, soak) leave a plain run
unless `-m` names them or their file is named, and skips are summarised one line per reason."""

import pathlib

import pytest

pytest_plugins = ["pytester"]

CONFTEST = (pathlib.Path(__file__).parent / "conftest.py").read_text()

TESTS = """
import pytest

@pytest.mark.slow
def test_long():
    pass

@pytest.mark.fuzz
def test_fuzzing():
    pass

def test_plain():
    pass

@pytest.mark.parametrize("i", range(3))
def test_needs_a_gpu(i):
    pytest.skip("no GPU here")

def test_needs_torch():
    pytest.skip("no torch here")
"""


@pytest.fixture
def suite(pytester, monkeypatch):
    # no third-party plugins (hypothesis, ...) re-imported by every in-process run
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makeconftest(CONFTEST)
    pytester.makeini("[pytest]\naddopts = -rfExX\nmarkers =\n    slow: s\n    fuzz: f\n")
    pytester.makepyfile(test_suite=TESTS)
    return pytester


def _run(suite, *args):
    # the directory (not the file) is what a plain `python -m pytest` collects
    return suite.runpytest_inprocess(*args, "-p", "no:cacheprovider", "--assert=plain")


def test_plain_run_leaves_out_the_opt_in_tests_and_says_how_to_run_them(suite):
    r = _run(suite, ".")
    r.assert_outcomes(passed=1, skipped=4, deselected=2)
    r.stdout.fnmatch_lines(['opt-in tests not run: 1 slow, 1 fuzz (run them with -m "slow or fuzz"*'])


def test_skips_are_one_line_per_reason(suite):
    r = _run(suite, ".")
    r.stdout.fnmatch_lines(["SKIPPED 3 (*test_suite.py): no GPU here",
                            "SKIPPED 1 (*test_suite.py): no torch here"])
    assert sum("SKIPPED" in line for line in r.outlines) == 2
    # -rs still lists every test (pytest's own summary), without ours beside it
    r = _run(suite, ".", "-rs")
    assert not any("one line per reason" in line for line in r.outlines)


def test_mark_expression_selects_the_opt_in_tests(suite):
    _run(suite, ".", "-m", "slow or fuzz").assert_outcomes(passed=2, deselected=5)
    _run(suite, ".", "-m", "not slow").assert_outcomes(passed=1, skipped=4, deselected=2)


def test_a_named_file_runs_its_opt_in_tests(suite):
    _run(suite, "test_suite.py").assert_outcomes(passed=3, skipped=4)
    _run(suite, "test_suite.py::test_long").assert_outcomes(passed=1)
