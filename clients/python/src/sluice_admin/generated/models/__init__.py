""" Contains all the data models used in inputs/outputs """

from .api_key import APIKey
from .api_key_create_in_body import ApiKeyCreateInBody
from .api_key_created import ApiKeyCreated
from .attempt import Attempt
from .conflict import Conflict
from .conflict_decision import ConflictDecision
from .conflict_decision_outcome import ConflictDecisionOutcome
from .conflict_detail import ConflictDetail
from .conflict_outcome import ConflictOutcome
from .conflict_outcome_outcome import ConflictOutcomeOutcome
from .correction import Correction
from .count_dead_deliveries_error_class import CountDeadDeliveriesErrorClass
from .count_out_body import CountOutBody
from .create_out_body import CreateOutBody
from .dead_count import DeadCount
from .dead_letter import DeadLetter
from .dead_letter_detail import DeadLetterDetail
from .dead_letter_detail_headers import DeadLetterDetailHeaders
from .dead_letter_filter_body_type_0 import DeadLetterFilterBodyType0
from .dead_letter_filter_body_type_1 import DeadLetterFilterBodyType1
from .dead_letter_filter_body_type_2 import DeadLetterFilterBodyType2
from .dead_letter_filter_body_type_3 import DeadLetterFilterBodyType3
from .dead_letter_filter_body_type_4 import DeadLetterFilterBodyType4
from .dead_retried import DeadRetried
from .dead_selection_body import DeadSelectionBody
from .dead_selection_body_error_class import DeadSelectionBodyErrorClass
from .delivery import Delivery
from .delivery_view import DeliveryView
from .delivery_view_state import DeliveryViewState
from .effect import Effect
from .endpoint import Endpoint
from .endpoint_created import EndpointCreated
from .endpoint_created_disabled_reason import EndpointCreatedDisabledReason
from .endpoint_created_kind import EndpointCreatedKind
from .endpoint_delivery import EndpointDelivery
from .endpoint_delivery_state import EndpointDeliveryState
from .endpoint_detail import EndpointDetail
from .endpoint_detail_disabled_reason import EndpointDetailDisabledReason
from .endpoint_detail_kind import EndpointDetailKind
from .endpoint_disabled_reason import EndpointDisabledReason
from .endpoint_health import EndpointHealth
from .endpoint_kind import EndpointKind
from .endpoint_patch_body import EndpointPatchBody
from .endpoint_patch_body_headers import EndpointPatchBodyHeaders
from .endpoint_patch_body_transformation_sample import EndpointPatchBodyTransformationSample
from .endpoint_test import EndpointTest
from .endpoint_test_from import EndpointTestFrom
from .entry import Entry
from .entry_outcome import EntryOutcome
from .error_detail import ErrorDetail
from .event import Event
from .event_status import EventStatus
from .event_type import EventType
from .group_lag import GroupLag
from .groups_out_body import GroupsOutBody
from .hour_figures import HourFigures
from .lag_row import LagRow
from .limits import Limits
from .list_audit_outcome import ListAuditOutcome
from .list_conflicts_state import ListConflictsState
from .list_deliveries_state import ListDeliveriesState
from .list_endpoints_enabled import ListEndpointsEnabled
from .list_out_api_key_body import ListOutAPIKeyBody
from .list_out_conflict_body import ListOutConflictBody
from .list_out_dead_letter_body import ListOutDeadLetterBody
from .list_out_delivery_view_body import ListOutDeliveryViewBody
from .list_out_endpoint_body import ListOutEndpointBody
from .list_out_entry_body import ListOutEntryBody
from .list_out_event_body import ListOutEventBody
from .list_out_event_type_body import ListOutEventTypeBody
from .list_out_source_body import ListOutSourceBody
from .list_out_tenant_body import ListOutTenantBody
from .list_out_token_body import ListOutTokenBody
from .list_out_workspace_body import ListOutWorkspaceBody
from .list_sources_disabled import ListSourcesDisabled
from .minute_counts import MinuteCounts
from .minute_counts_by_status import MinuteCountsByStatus
from .new_endpoint_body import NewEndpointBody
from .new_endpoint_body_headers import NewEndpointBodyHeaders
from .new_endpoint_body_kind import NewEndpointBodyKind
from .new_endpoint_body_transformation_sample import NewEndpointBodyTransformationSample
from .new_event_type_body import NewEventTypeBody
from .new_event_type_body_event_time_format import NewEventTypeBodyEventTimeFormat
from .new_event_type_body_resource_type import NewEventTypeBodyResourceType
from .new_event_type_body_schema import NewEventTypeBodySchema
from .new_event_type_body_source_kind import NewEventTypeBodySourceKind
from .new_source_body import NewSourceBody
from .new_source_body_kind import NewSourceBodyKind
from .new_token_body import NewTokenBody
from .new_token_body_role import NewTokenBodyRole
from .overview import Overview
from .payload import Payload
from .payload_state import PayloadState
from .portal_link import PortalLink
from .portal_link_access import PortalLinkAccess
from .portal_link_created import PortalLinkCreated
from .portal_link_created_access import PortalLinkCreatedAccess
from .portal_link_created_scope import PortalLinkCreatedScope
from .portal_link_request import PortalLinkRequest
from .portal_link_request_access import PortalLinkRequestAccess
from .portal_link_request_scope import PortalLinkRequestScope
from .portal_link_scope import PortalLinkScope
from .position import Position
from .problem import Problem
from .problem_kind import ProblemKind
from .process_sample import ProcessSample
from .process_sample_answers import ProcessSampleAnswers
from .process_sample_groups import ProcessSampleGroups
from .process_samples import ProcessSamples
from .reconcile_body import ReconcileBody
from .reconcile_report import ReconcileReport
from .reconcile_report_corrections import ReconcileReportCorrections
from .reconcile_report_outcome import ReconcileReportOutcome
from .reconcile_run import ReconcileRun
from .reconcile_run_outcome import ReconcileRunOutcome
from .reconcile_run_phase import ReconcileRunPhase
from .reconcile_status import ReconcileStatus
from .reconcile_status_phase import ReconcileStatusPhase
from .released import Released
from .replay_body import ReplayBody
from .replay_count import ReplayCount
from .replay_result import ReplayResult
from .replayed import Replayed
from .request_as_sent import RequestAsSent
from .rewind_body_type_0 import RewindBodyType0
from .rewind_body_type_1 import RewindBodyType1
from .rewind_body_type_2 import RewindBodyType2
from .rewind_move import RewindMove
from .rewind_out import RewindOut
from .rotate_in_body import RotateInBody
from .rotated import Rotated
from .runs_out_body import RunsOutBody
from .search_events_status import SearchEventsStatus
from .send import Send
from .sent_header import SentHeader
from .slot_status import SlotStatus
from .source import Source
from .source_body_limit_in_body import SourceBodyLimitInBody
from .source_kind import SourceKind
from .source_reconciliation import SourceReconciliation
from .source_rotate_in_body import SourceRotateInBody
from .source_rotated import SourceRotated
from .stats import Stats
from .taker import Taker
from .taker_verdict import TakerVerdict
from .target_credentials import TargetCredentials
from .target_settings import TargetSettings
from .target_settings_sasl_mechanism import TargetSettingsSaslMechanism
from .tenant import Tenant
from .tenant_create_in_body import TenantCreateInBody
from .test_in_body import TestInBody
from .token import Token
from .token_created import TokenCreated
from .token_created_portal_scope import TokenCreatedPortalScope
from .token_created_role import TokenCreatedRole
from .token_portal_scope import TokenPortalScope
from .token_role import TokenRole
from .trail import Trail
from .trial import Trial
from .trial_on import TrialOn
from .verification import Verification
from .waiting import Waiting
from .workspace import Workspace
from .workspace_create_in_body import WorkspaceCreateInBody

__all__ = (
    "APIKey",
    "ApiKeyCreated",
    "ApiKeyCreateInBody",
    "Attempt",
    "Conflict",
    "ConflictDecision",
    "ConflictDecisionOutcome",
    "ConflictDetail",
    "ConflictOutcome",
    "ConflictOutcomeOutcome",
    "Correction",
    "CountDeadDeliveriesErrorClass",
    "CountOutBody",
    "CreateOutBody",
    "DeadCount",
    "DeadLetter",
    "DeadLetterDetail",
    "DeadLetterDetailHeaders",
    "DeadLetterFilterBodyType0",
    "DeadLetterFilterBodyType1",
    "DeadLetterFilterBodyType2",
    "DeadLetterFilterBodyType3",
    "DeadLetterFilterBodyType4",
    "DeadRetried",
    "DeadSelectionBody",
    "DeadSelectionBodyErrorClass",
    "Delivery",
    "DeliveryView",
    "DeliveryViewState",
    "Effect",
    "Endpoint",
    "EndpointCreated",
    "EndpointCreatedDisabledReason",
    "EndpointCreatedKind",
    "EndpointDelivery",
    "EndpointDeliveryState",
    "EndpointDetail",
    "EndpointDetailDisabledReason",
    "EndpointDetailKind",
    "EndpointDisabledReason",
    "EndpointHealth",
    "EndpointKind",
    "EndpointPatchBody",
    "EndpointPatchBodyHeaders",
    "EndpointPatchBodyTransformationSample",
    "EndpointTest",
    "EndpointTestFrom",
    "Entry",
    "EntryOutcome",
    "ErrorDetail",
    "Event",
    "EventStatus",
    "EventType",
    "GroupLag",
    "GroupsOutBody",
    "HourFigures",
    "LagRow",
    "Limits",
    "ListAuditOutcome",
    "ListConflictsState",
    "ListDeliveriesState",
    "ListEndpointsEnabled",
    "ListOutAPIKeyBody",
    "ListOutConflictBody",
    "ListOutDeadLetterBody",
    "ListOutDeliveryViewBody",
    "ListOutEndpointBody",
    "ListOutEntryBody",
    "ListOutEventBody",
    "ListOutEventTypeBody",
    "ListOutSourceBody",
    "ListOutTenantBody",
    "ListOutTokenBody",
    "ListOutWorkspaceBody",
    "ListSourcesDisabled",
    "MinuteCounts",
    "MinuteCountsByStatus",
    "NewEndpointBody",
    "NewEndpointBodyHeaders",
    "NewEndpointBodyKind",
    "NewEndpointBodyTransformationSample",
    "NewEventTypeBody",
    "NewEventTypeBodyEventTimeFormat",
    "NewEventTypeBodyResourceType",
    "NewEventTypeBodySchema",
    "NewEventTypeBodySourceKind",
    "NewSourceBody",
    "NewSourceBodyKind",
    "NewTokenBody",
    "NewTokenBodyRole",
    "Overview",
    "Payload",
    "PayloadState",
    "PortalLink",
    "PortalLinkAccess",
    "PortalLinkCreated",
    "PortalLinkCreatedAccess",
    "PortalLinkCreatedScope",
    "PortalLinkRequest",
    "PortalLinkRequestAccess",
    "PortalLinkRequestScope",
    "PortalLinkScope",
    "Position",
    "Problem",
    "ProblemKind",
    "ProcessSample",
    "ProcessSampleAnswers",
    "ProcessSampleGroups",
    "ProcessSamples",
    "ReconcileBody",
    "ReconcileReport",
    "ReconcileReportCorrections",
    "ReconcileReportOutcome",
    "ReconcileRun",
    "ReconcileRunOutcome",
    "ReconcileRunPhase",
    "ReconcileStatus",
    "ReconcileStatusPhase",
    "Released",
    "ReplayBody",
    "ReplayCount",
    "Replayed",
    "ReplayResult",
    "RequestAsSent",
    "RewindBodyType0",
    "RewindBodyType1",
    "RewindBodyType2",
    "RewindMove",
    "RewindOut",
    "Rotated",
    "RotateInBody",
    "RunsOutBody",
    "SearchEventsStatus",
    "Send",
    "SentHeader",
    "SlotStatus",
    "Source",
    "SourceBodyLimitInBody",
    "SourceKind",
    "SourceReconciliation",
    "SourceRotated",
    "SourceRotateInBody",
    "Stats",
    "Taker",
    "TakerVerdict",
    "TargetCredentials",
    "TargetSettings",
    "TargetSettingsSaslMechanism",
    "Tenant",
    "TenantCreateInBody",
    "TestInBody",
    "Token",
    "TokenCreated",
    "TokenCreatedPortalScope",
    "TokenCreatedRole",
    "TokenPortalScope",
    "TokenRole",
    "Trail",
    "Trial",
    "TrialOn",
    "Verification",
    "Waiting",
    "Workspace",
    "WorkspaceCreateInBody",
)
