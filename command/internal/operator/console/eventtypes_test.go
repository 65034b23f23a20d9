package console_test

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/console"
)

// An event type's page shows each version's schema, newest first, the
// newest marked current, and the type's status; the list links to it.
func TestAnEventTypesPageShowsItsVersions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	c := b.signedIn(t, admintoken.RoleRead, w.tenant)
	path := console.Prefix + "/event-types/" + w.tenant + "/api/" + worldType
	if list := b.page(t, c, console.Prefix+"/event-types"); !strings.Contains(list, `href="`+path+`"`) {
		t.Fatalf("the event types list does not link to %s", path)
	}
	page := b.page(t, c, path)
	contains(t, "the type's page", page, "Version 2 (current)", "Version 1</h2>", "superseded", `<span class="badge good">active</span>`,
		"&#34;required&#34;: [\n    &#34;order_id&#34;\n  ]")
	if v2, v1 := strings.Index(page, "Version 2"), strings.Index(page, "Version 1"); v2 > v1 {
		t.Errorf("the versions are not newest first")
	}
	if strings.Contains(page, "Deprecate") {
		t.Errorf("a read token is offered an action")
	}
}
