"""The libiscsi tests (Debian 12's iscsi-test-cu, libiscsi 1.19) a vaai LUN
is expected to fail, with why.  Each fails on LIO's own fileio too (make
report-libiscsi runs both in one boot), or passes there only because LIO
does not implement the command and the test is skipped.

EXPECTED: test -> why; it fails every run.  FLAKY: test -> why; it fails
or passes by timing, on LIO's backends as on ours."""

_CAW_256 = (
    "libiscsi 1.19 loops to 256 blocks, which COMPARE AND WRITE's 8-bit "
    "NUMBER OF LOGICAL BLOCKS carries as 0 beside 512 blocks of data-out; "
    "the data-out does not match the CDB (SAM-5 5.4.3): INVALID FIELD IN "
    "COMMAND INFORMATION UNIT, where the test wants INVALID FIELD IN CDB. "
    "libiscsi 1.20 stops at 255 (its commit 33c66f2)"
)
_RESIDUALS = (
    "LIO core (target_cmd_size_check(), before any backend) refuses a write "
    "whose Expected Data Transfer Length differs from the CDB's with INVALID "
    "FIELD IN COMMAND INFORMATION UNIT, where the test wants GOOD and a "
    "residual"
)
_RESIDUALS_OURS = (
    "WRITE AND VERIFY is parsed by the backend (vaai_write_verify.c), which "
    "answers a data-out that differs from the CDB's transfer as LIO core "
    "answers one for WRITE (SAM-5 5.4.3 allows it): INVALID FIELD IN COMMAND "
    "INFORMATION UNIT. LIO passes the (12) test only by not implementing the "
    "command (the test is skipped)"
)
_RESERVE6 = (
    "SPC-2 RESERVE(6) is LIO core's (target_core_pr.c): a reservation of a "
    "nexus that logged out, was lost or was reset is still in place when "
    "the test's other initiator asks"
)

EXPECTED = {
    "CompareAndWrite.Simple": _CAW_256,
    "CompareAndWrite.Miscompare": _CAW_256,
    "iSCSIResiduals.Write10Residuals": _RESIDUALS,
    "iSCSIResiduals.Write12Residuals": _RESIDUALS,
    "iSCSIResiduals.Write16Residuals": _RESIDUALS,
    "iSCSIResiduals.WriteVerify10Residuals": _RESIDUALS_OURS,
    "iSCSIResiduals.WriteVerify12Residuals": _RESIDUALS_OURS,
    "iSCSIResiduals.WriteVerify16Residuals": _RESIDUALS_OURS,
    "iSCSIdatasn.iSCSIDataSnInvalid": (
        "LIO's iSCSI target (iscsi_target_mod, not the backend) completes a "
        "write whose Data-Out PDUs carry a wrong DataSN, where the test "
        "wants it to fail"
    ),
}

FLAKY = {
    "Reserve6.ITNexusLoss": _RESERVE6,
    "Reserve6.Logout": _RESERVE6,
    "Reserve6.LUNReset": _RESERVE6,
}
