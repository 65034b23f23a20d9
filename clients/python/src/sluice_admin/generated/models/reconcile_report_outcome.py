from enum import StrEnum

class ReconcileReportOutcome(StrEnum):
    ABANDONED = "abandoned"
    BUDGET = "budget"
    FAILED = "failed"
    INCOMPLETE = "incomplete"
    INTERRUPTED = "interrupted"
    OK = "ok"
    PARTIAL = "partial"
    REFUSED = "refused"
    RUNNING = "running"

    def __str__(self) -> str:
        return str(self.value)
