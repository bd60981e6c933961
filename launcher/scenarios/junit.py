"""Results of a scenario run: the human summary and JUnit XML (one test suite per scenario, one test case per
check; a step that could not run is an error case). Pure: strings in, strings out."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["CaseResult", "ScenarioResult", "summary", "to_junit_xml"]


@dataclass(frozen=True)
class CaseResult:
    """One check (``failure`` when it did not hold) or a step that could not run (``error``)."""

    name: str
    line: int
    seconds: float
    failure: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None and self.error is None


@dataclass(frozen=True)
class ScenarioResult:
    name: str
    path: str
    cases: tuple[CaseResult, ...]
    seconds: float

    @property
    def ok(self) -> bool:
        return bool(self.cases) and all(c.ok for c in self.cases)

    def count(self, what: str) -> int:
        return sum(getattr(c, what) is not None for c in self.cases)


def to_junit_xml(results: Sequence[ScenarioResult]) -> str:
    """The JUnit XML document CI servers read (testsuites → testsuite → testcase)."""
    root = ET.Element("testsuites", {"name": "npcworld scenarios", **_counts(results)})
    for r in results:
        suite = ET.SubElement(root, "testsuite", {"name": r.name, "file": r.path, **_counts([r])})
        for c in r.cases:
            case = ET.SubElement(suite, "testcase", name=c.name, classname=r.name, file=r.path,
                                 line=str(c.line), time=f"{c.seconds:.3f}")
            if c.failure is not None:
                failed = ET.SubElement(case, "failure", message=_first_line(c.failure), type="CheckFailed")
                failed.text = c.failure
            if c.error is not None:
                ET.SubElement(case, "error", message=_first_line(c.error), type="StepError").text = c.error
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _counts(results: Sequence[ScenarioResult]) -> dict[str, str]:
    return {
        "tests": str(sum(len(r.cases) for r in results)),
        "failures": str(sum(r.count("failure") for r in results)),
        "errors": str(sum(r.count("error") for r in results)),
        "time": f"{sum(r.seconds for r in results):.3f}",
    }


def _first_line(text: str) -> str:
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= 200 else line[:197] + "..."


def summary(results: Sequence[ScenarioResult]) -> str:
    """One line per scenario, every failed check and error under it with its file and line, then totals."""
    out = []
    for r in results:
        out.append(f"{'PASS' if r.ok else 'FAIL'}  {r.name}  ({len(r.cases)} checks, {r.seconds:.1f} s)")
        for c in r.cases:
            if not c.ok:
                kind = "error" if c.error is not None else "failed"
                out.append(f"  {r.path}:{c.line}: {kind}: {c.name}\n    {c.error or c.failure}")
    counts = _counts(results)
    failed_scenarios = sum(not r.ok for r in results)
    out.append(f"{len(results)} scenarios ({failed_scenarios} failed), {counts['tests']} checks: "
               f"{counts['failures']} failed, {counts['errors']} errors")
    return "\n".join(out)
