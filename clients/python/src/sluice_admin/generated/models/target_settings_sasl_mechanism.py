from enum import StrEnum

class TargetSettingsSaslMechanism(StrEnum):
    PLAIN = "plain"
    SCRAM_SHA_256 = "scram-sha-256"
    SCRAM_SHA_512 = "scram-sha-512"

    def __str__(self) -> str:
        return str(self.value)
