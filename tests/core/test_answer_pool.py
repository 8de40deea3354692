"""Answer checking under load (issue 35): the worker processes of ``prmkit.core.answers``.

Labelling checks the rollouts of hundreds of prefixes at once. Time spent queued behind other checks must
not count against a check's timeout, and a check that hangs must not hold a worker for good. The workers
here run :func:`slow_and_hanging_math_verify` as they start: every check takes a little longer, and a few
marked answers hang.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from prmkit.core import answers
from prmkit.core.answers import check_answer, check_answers

GOLD = r"\frac{3}{4}"
EQUAL_FORMS = [
    r"\frac{3}{4}",
    r"\dfrac{3}{4}",
    r"\tfrac{3}{4}",
    r"\frac34",
    "0.75",
    r"\frac{6}{8}",
    r"\dfrac{75}{100}",
    r"\boxed{\frac{3}{4}}",
]
SLOW_CHECK = 0.002  # seconds added to every check in the workers
TIMEOUT = 0.5
HANG = r"\frac{13}{17}"  # hangs in Python: the worker's timer stops it
HANG_IN_C = r"\frac{13}{19}"  # hangs where no signal reaches (as in C code): the worker is killed
TAKES_A_SECOND = r"\frac{13}{23}"
PARSE_LOG = "PRMKIT_TEST_PARSE_LOG"  # read by the workers of this module only


def slow_and_hanging_math_verify() -> None:
    """Run in each worker as it starts: slows math-verify down, hangs on the marked answers, logs parses."""
    import math_verify

    parse, verify = math_verify.parse, math_verify.verify
    log = Path(os.environ[PARSE_LOG]) / f"{os.getpid()}.log"

    def slow_verify(*args, **kwargs):
        time.sleep(SLOW_CHECK)
        return verify(*args, **kwargs)

    def hanging_parse(text, *args, **kwargs):
        with log.open("a") as f:
            f.write(text + "\n")
        if HANG in text:
            time.sleep(60)
        if HANG_IN_C in text:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
            time.sleep(60)
        if TAKES_A_SECOND in text:
            time.sleep(1)
        return parse(text, *args, **kwargs)

    math_verify.parse, math_verify.verify = hanging_parse, slow_verify


def refuse_to_start() -> None:
    raise RuntimeError("this worker refuses to start")


@pytest.fixture(scope="module")
def parse_log(tmp_path_factory):
    """Two workers running :func:`slow_and_hanging_math_verify`; the folder where they log their parses."""
    folder = tmp_path_factory.mktemp("parses")
    os.environ[PARSE_LOG] = str(folder)
    answers.configure(workers=2, timeout=TIMEOUT, initializer=f"{__name__}:slow_and_hanging_math_verify")
    yield folder
    answers.configure()
    del os.environ[PARSE_LOG]


def _in_threads(count: int, work) -> list:
    results: list = [None] * count

    def run(i: int) -> None:
        results[i] = work()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_time_queued_does_not_count_against_the_timeout(parse_log):
    """256 labelling threads, 8 rollouts each: most wait far longer than the timeout, none comes back None.

    With the timeout counted from submission, as it was, every check queued past 0.25 s came back None.
    """
    check_answer(GOLD, EQUAL_FORMS[0])  # a worker is up before the clock starts
    start = time.monotonic()
    verdicts = _in_threads(256, lambda: check_answers(GOLD, EQUAL_FORMS, timeout=0.25))
    elapsed = time.monotonic() - start
    assert elapsed > 4 * 0.25, "the queue was too short to show anything"
    assert [v for batch in verdicts for v in batch] == [True] * 256 * len(EQUAL_FORMS)


def test_a_check_that_hangs_is_none_and_the_rest_of_its_batch_is_checked(parse_log):
    start = time.monotonic()
    assert check_answers(GOLD, [HANG, r"\dfrac{3}{4}", r"\frac{4}{3}"]) == [None, True, False]
    assert time.monotonic() - start < TIMEOUT + 1.5


def test_a_worker_stuck_past_its_timer_is_killed_and_replaced(parse_log):
    start = time.monotonic()
    assert check_answer(GOLD, HANG_IN_C) is None
    assert time.monotonic() - start < 2 * TIMEOUT + 1.5
    _in_threads(2, lambda: check_answer(GOLD, r"\dfrac{3}{4}"))  # both workers up (the new one starting)
    start = time.monotonic()
    assert _in_threads(2, lambda: check_answer(GOLD, TAKES_A_SECOND, timeout=5)) == [False, False]
    assert time.monotonic() - start < 1.8, "the two checks did not run side by side: a worker is missing"


def test_the_reference_is_parsed_once_per_worker(parse_log):
    reference = r"\frac{355}{113}"
    verdicts = check_answers(reference, [r"\dfrac{355}{113}", r"\frac{710}{226}", r"\frac{22}{7}"])
    verdicts += [check_answer(reference, r"\dfrac{710}{226}") for _ in range(4)]
    assert verdicts == [True, True, False] + [True] * 4
    for log in parse_log.iterdir():
        assert log.read_text().splitlines().count(f"${reference}$") <= 1, log.name


def test_plain_numbers_never_reach_a_worker():
    """With workers that cannot start, numbers are still compared; LaTeX fails loudly, not as None."""
    answers.configure(workers=1, initializer=f"{__name__}:refuse_to_start")
    try:
        assert check_answers("3/4", ["0.75", "3/4", "1,000", None, " "]) == [True, True, False, None, None]
        assert check_answer("1,000", "1000") is True
        with pytest.raises(RuntimeError, match="died while starting"):
            check_answer(GOLD, r"\dfrac{3}{4}")
    finally:
        answers.configure()


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"workers": 0}, "workers"),
        ({"timeout": 0}, "timeout"),
        ({"initializer": "no_such_module_here:f"}, "cannot import"),
        ({"initializer": "os.path"}, "module:function"),
    ],
)
def test_configure_refuses_what_cannot_work(settings, message):
    with pytest.raises(ValueError, match=message):
        answers.configure(**settings)
