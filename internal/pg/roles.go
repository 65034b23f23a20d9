package pg

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Stage is a part of Sluice that may connect to Postgres as a role of its
// own, holding only the privileges its statements need (docs: "Postgres
// roles and grants").
type Stage string

const (
	// StageOwner owns the schema: migrations (tables, the outbox
	// publication, which needs ownership of outbox) and the lifecycle
	// manager, which creates, detaches and drops partitions: Postgres 15
	// has no MAINTAIN privilege, only ownership allows those. Nothing is
	// granted to it; it is the role the migrations ran as.
	StageOwner Stage = "owner"
	// StageIngest accepts webhooks (inbox, outbox) and runs reconciliation.
	StageIngest Stage = "ingest"
	// StageRelay streams the outbox to Kafka: the REPLICATION attribute for
	// its slot, reading and expiring outbox rows, its own bookkeeping.
	StageRelay Stage = "relay"
	// StageConsumers applies records (the consumer groups' effects, dead
	// letters, the fan-out to tenants' endpoints, the dispatcher) and
	// delivers (the deliverer).
	StageConsumers Stage = "consumers"
	// StageAdmin is the admin listener: the admin API and the console. It
	// reads everything, and acts as the consumers do (a dead letter
	// replayed runs its group's handler in the admin process) and as
	// ingest does (a reconciliation run by request).
	StageAdmin Stage = "admin"
)

// Publication is the outbox's publication that migration 00035 makes
// (cdc.Config's default).
const Publication = "sluice_outbox"

// RuntimeStages are the stages a role may be granted for, in order.
var RuntimeStages = []Stage{StageIngest, StageRelay, StageConsumers, StageAdmin}

// ParseStage reads a stage's name.
func ParseStage(s string) (Stage, error) {
	st := Stage(strings.TrimSpace(s))
	if slices.Contains(RuntimeStages, st) {
		return st, nil
	}
	if st == StageOwner {
		return "", fmt.Errorf("stage owner is granted nothing: it is the role that runs `sluice migrate` and owns the schema")
	}
	return "", fmt.Errorf("unknown stage %q: want one of %s", s, joinStages(RuntimeStages))
}

func joinStages(stages []Stage) string {
	names := make([]string, len(stages))
	for i, s := range stages {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// Table privileges, as GRANT spells them.
const (
	sel = "SELECT"
	ins = "INSERT"
	upd = "UPDATE" // also what SELECT ... FOR UPDATE and ON CONFLICT DO UPDATE need
	del = "DELETE"
	// usage is a sequence's privilege for nextval.
	usage = "USAGE"
)

// migrationsTable is goose's record of the schema's version: every stage
// reads it to refuse a schema older than its binary.
const migrationsTable = "sluice_schema_migrations"

// stageTables is what each stage does to each table, found by reading
// every stage's statements and proven by the end-to-end tests running
// each process as a role granted exactly this (cmd/sluice's
// e2e_roles_test.go). It is written once: GrantStatements emits it as SQL
// and CheckPrivileges asks Postgres whether a role holds it. Partitions
// need nothing of their own: Postgres checks the privileges of the table a
// statement names, and Sluice names only the partitioned parents.
// Identity columns need no sequence privilege; LISTEN/NOTIFY and advisory
// locks need no privilege; the catalogs read (pg_replication_slots,
// pg_publication, pg_class) are readable by every role.
var stageTables = map[Stage]map[string][]string{
	StageIngest: {
		"inbox":                  {sel, ins, upd},
		"inbox_payloads":         {sel, ins},
		"inbox_conflicts":        {sel, ins},
		"inbox_duplicates":       {ins},
		"inbox_waiting":          {sel, ins, del},
		"object_links":           {sel, ins},
		"outbox":                 {ins},
		"tenants":                {sel},
		"tenant_limits":          {sel},
		"sources":                {sel},
		"source_secrets":         {sel},
		"source_api_credentials": {sel},
		"api_keys":               {sel},
		"event_types":            {sel},
		"event_type_versions":    {sel},
		"endpoints":              {sel},
		"endpoint_secrets":       {sel},
		"reconcile_budgets":      {sel, ins, upd},
		"reconcile_positions":    {sel, ins, upd},
		"reconcile_runs":         {sel, ins, upd},
		"reconcile_corrections":  {ins},
	},
	StageRelay: {
		// Retention deletes confirmed rows, locking them first (FOR UPDATE
		// SKIP LOCKED): UPDATE is the privilege that lock needs.
		"outbox":     {sel, upd, del},
		"cdc_slots":  {sel, ins, upd},
		"cdc_parked": {sel, ins, upd},
	},
	StageConsumers: {
		// The deliverer writes operational events (endpoint transitions)
		// through the same door as ingest: an inbox row and its payload.
		"inbox":               {sel, ins},
		"inbox_payloads":      {sel, ins},
		"outbox":              {ins},
		"dead_letters":        {sel, ins, upd},
		"consumer_waiting":    {sel, ins, upd, del},
		"tenants":             {sel},
		"workspace_customers": {sel},
		"dispatch_delivered":  {sel},
		"endpoints":           {sel, ins, upd},
		"endpoint_secrets":    {sel},
		"deliveries":          {sel, ins, upd},
		"pending_deliveries":  {sel, ins, del},
		"delivery_attempts":   {sel, ins},
		"delivery_marks":      {sel, ins, upd},
		"delivery_redos":      {sel, ins, del},
		"delivery_minutes":    {sel, ins, upd, del},
		"delivery_queue_rows": {sel, upd},
	},
	StageAdmin: {
		"tenants":                {upd},
		"tenant_limits":          {ins, upd, del},
		"workspaces":             {ins},
		"workspace_customers":    {ins},
		"sources":                {ins, upd},
		"source_secrets":         {ins, upd},
		"source_api_credentials": {ins, upd, del},
		"api_keys":               {ins, upd},
		"event_types":            {ins, upd},
		"event_type_versions":    {ins},
		"inbox":                  {upd},
		"outbox":                 {ins},
		"endpoints":              {ins, upd, del},
		"endpoint_secrets":       {ins, upd},
		"deliveries":             {ins, upd},
		"pending_deliveries":     {ins},
		"delivery_redos":         {ins},
		"admin_tokens":           {ins, upd},
		"admin_audit":            {ins},
		"admin_idempotency_keys": {ins, upd, del},
		"console_sessions":       {ins, upd, del},
		"conflict_outcomes":      {ins, upd},
	},
}

// stageSequences are the sequences a stage calls on itself: ingest takes
// inbox ids ahead of its insert (nextval: USAGE), the consumers and the
// operators ask how far dead-letter and parked ids were issued
// (pg_sequence_last_value: SELECT). Inserts into identity columns need
// none.
var stageSequences = map[Stage]map[string][]string{
	StageIngest:    {"inbox_id_seq": {usage}},
	StageConsumers: {"dead_letters_id_seq": {sel}},
	StageAdmin:     {"cdc_parked_id_seq": {sel}},
}

// stageIncludes are the stages whose statements another stage runs too.
var stageIncludes = map[Stage][]Stage{
	StageAdmin: {StageIngest, StageConsumers},
}

// adminReads: the admin listener reads every table Sluice has (searches,
// trails, the overview, inspection of each stage's state). Effect groups'
// tables are not Sluice's (EffectTables), but for balances: a workspace's
// view shows its credits, whichever groups run.
var adminReads = []string{
	"admin_audit", "admin_idempotency_keys", "admin_tokens", "api_keys", "balances", "cdc_parked", "cdc_slots",
	"conflict_outcomes", "console_sessions", "consumer_waiting", "dead_letters", "deliveries", "delivery_attempts",
	"delivery_log", "delivery_marks", "delivery_minutes", "delivery_queue_rows", "delivery_redos", "dispatch_delivered", "endpoint_secrets", "endpoints", "event_type_versions", "event_types",
	"inbox", "inbox_conflicts", "inbox_duplicates", "inbox_payloads",
	"inbox_waiting", "object_links", "outbox", "pending_deliveries", "reconcile_budgets", "reconcile_corrections",
	"reconcile_positions", "reconcile_runs", "source_api_credentials", "source_secrets", "sources",
	"tenant_limits", "tenants", "workspace_customers", "workspaces",
}

// EffectTables are the tables of the effect groups a deployment runs
// (effect.Group.Tables, Sluice's built-in groups' among them), beyond the
// tables above: the stages' privileges on them follow the groups a
// deployment runs, so a role is granted, and checked for, only what those
// groups need. A name is a table's, or schema.table; a schema other than
// public is granted USAGE with its tables.
type EffectTables struct {
	// Written are the running groups' tables. The consumers apply the
	// groups' effects there, with statements that are the groups' own:
	// SELECT, INSERT, UPDATE and DELETE. The admin listener runs the
	// consumers' statements (a dead letter replayed runs its group's
	// handler), and reads the tables for trails.
	Written []string
	// Read are the tables reconciliation reads to choose the objects
	// whose state a provider is asked for (the groups' projections it
	// looks up, for the groups that run): SELECT for ingest, which runs
	// it, and so for the admin listener.
	Read []string
}

// TablePrivilege is one privilege a stage needs on one table (or
// sequence, or schema).
type TablePrivilege struct {
	Table     string
	Privilege string
	Sequence  bool
	// Schema: Table names a schema (USAGE).
	Schema bool
}

// Privileges lists what stage needs, its included stages' needs with it:
// USAGE on the schemas of effects' tables outside public, then every
// table sorted by name then privilege, then sequences.
func Privileges(stage Stage, effects EffectTables) []TablePrivilege {
	// Every process reads the schema's version, and settles the
	// deployment's resource types at start (the first one stores them).
	tables := needs{migrationsTable: {sel: true}, "tenant_resource_types": {sel: true, ins: true}}
	schemas, seqs := needs{}, needs{}
	for _, s := range append([]Stage{stage}, stageIncludes[stage]...) {
		for table, privs := range stageTables[s] {
			tables.add(table, privs...)
		}
		for seq, privs := range stageSequences[s] {
			seqs.add(seq, privs...)
		}
		switch s {
		case StageConsumers:
			tables.addEffects(schemas, effects.Written, sel, ins, upd, del)
		case StageIngest:
			tables.addEffects(schemas, effects.Read, sel)
		}
	}
	if stage == StageAdmin {
		for _, t := range adminReads {
			tables.add(t, sel)
		}
	}
	out := sorted(schemas, TablePrivilege{Schema: true})
	out = append(out, sorted(tables, TablePrivilege{})...)
	return append(out, sorted(seqs, TablePrivilege{Sequence: true})...)
}

// needs are privileges by what they are on.
type needs map[string]map[string]bool

func (n needs) add(on string, privs ...string) {
	if n[on] == nil {
		n[on] = map[string]bool{}
	}
	for _, p := range privs {
		n[on][p] = true
	}
}

// addEffects adds privs on effects' tables, and to schemas USAGE on
// theirs outside public.
func (n needs) addEffects(schemas needs, tables []string, privs ...string) {
	for _, t := range tables {
		n.add(t, privs...)
		if schema, _, ok := strings.Cut(t, "."); ok && schema != "public" {
			schemas.add(schema, usage)
		}
	}
}

// sorted lists need's privileges as kind's (a table, a sequence or a
// schema).
func sorted(need needs, kind TablePrivilege) []TablePrivilege {
	var out []TablePrivilege
	for _, table := range slices.Sorted(maps.Keys(need)) {
		for _, p := range slices.SortedFunc(maps.Keys(need[table]), privilegeOrder) {
			kind.Table, kind.Privilege = table, p
			out = append(out, kind)
		}
	}
	return out
}

func privilegeOrder(a, b string) int {
	rank := func(p string) int { return slices.Index([]string{sel, ins, upd, del, usage}, p) }
	return cmp.Compare(rank(a), rank(b))
}

// needsReplication: the stages whose role must be able to open a
// replication connection (the REPLICATION attribute).
func needsReplication(stage Stage) bool { return stage == StageRelay }

// Assignment names the role each stage connects as. One role may serve
// several stages (a process running ingest and the admin listener
// connects once): it is granted each one's privileges.
type Assignment map[Stage]string

// ParseAssignment reads "stage=role,stage=role" (`sluice migrate
// --grant`); "ingest+admin=role" grants one role two stages.
func ParseAssignment(items []string) (Assignment, error) {
	a := Assignment{}
	for _, item := range items {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		stages, role, ok := strings.Cut(item, "=")
		if !ok || strings.TrimSpace(role) == "" {
			return nil, fmt.Errorf("--grant %q: want stage=role, such as ingest=sluice_ingest", item)
		}
		for _, name := range strings.Split(stages, "+") {
			st, err := ParseStage(name)
			if err != nil {
				return nil, fmt.Errorf("--grant %q: %w", item, err)
			}
			if prev, dup := a[st]; dup && prev != strings.TrimSpace(role) {
				return nil, fmt.Errorf("--grant: stage %s given twice (%s and %s)", st, prev, role)
			}
			a[st] = strings.TrimSpace(role)
		}
	}
	if len(a) == 0 {
		return nil, fmt.Errorf("--grant: name at least one stage=role")
	}
	return a, nil
}

// GrantStatements is the SQL that gives each role of a its stages'
// privileges, effects' tables included, in the order a DBA would run it;
// the REPLICATION attribute comes as ALTER ROLE, which only a superuser may
// run on Postgres 15 (managed services: docs/managed-services.md). It
// revokes nothing: running it again after a migration adds what the new
// tables need.
func GrantStatements(a Assignment, effects EffectTables) []string {
	var out []string
	for _, stage := range RuntimeStages {
		role, ok := a[stage]
		if !ok {
			continue
		}
		r := pgx.Identifier{role}.Sanitize()
		out = append(out, fmt.Sprintf("-- stage %s", stage), fmt.Sprintf("GRANT USAGE ON SCHEMA public TO %s;", r))
		if needsReplication(stage) {
			out = append(out, fmt.Sprintf("ALTER ROLE %s WITH REPLICATION;", r))
		}
		byTable := map[TablePrivilege][]string{}
		var order []TablePrivilege
		for _, p := range Privileges(stage, effects) {
			on := TablePrivilege{Table: p.Table, Sequence: p.Sequence, Schema: p.Schema}
			if byTable[on] == nil {
				order = append(order, on)
			}
			byTable[on] = append(byTable[on], p.Privilege)
		}
		for _, on := range order {
			out = append(out, fmt.Sprintf("GRANT %s ON %s TO %s;", strings.Join(byTable[on], ", "), on.object(), r))
		}
	}
	return out
}

// object is how GRANT names it.
func (p TablePrivilege) object() string {
	switch {
	case p.Schema:
		return "SCHEMA " + quoted(p.Table)
	case p.Sequence:
		return "SEQUENCE " + quoted(p.Table)
	}
	return quoted(p.Table)
}

// kind is what p is on, as the privileges' check reads it.
func (p TablePrivilege) kind() string {
	switch {
	case p.Schema:
		return "schema"
	case p.Sequence:
		return "sequence"
	}
	return "table"
}

// quoted is a name as SQL spells it, in its schema when it names one.
func quoted(name string) string { return pgx.Identifier(strings.Split(name, ".")).Sanitize() }
