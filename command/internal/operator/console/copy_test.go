package console_test

import (
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/console"
)

// An id a page shows shortened is copied whole by its Copy button: the
// console's own script gives the button its click under the page's CSP.
func TestACopyButtonCopiesTheWholeID(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	_, token := b.token(t, admintoken.RoleRead, w.tenant)
	ctx := browser(t)
	b.browserSignIn(t, ctx, token)
	button := `button.copy[data-copy="` + w.endpoint + `"]`
	var copied, label string
	err := chromedp.Run(ctx,
		cdpbrowser.GrantPermissions([]cdpbrowser.PermissionType{cdpbrowser.PermissionTypeClipboardReadWrite, cdpbrowser.PermissionTypeClipboardSanitizedWrite}).
			WithOrigin(b.srv.URL),
		chromedp.Navigate(b.srv.URL+console.Prefix+"/destinations"),
		chromedp.WaitVisible(button), // hidden until console.js ran
		chromedp.Click(button),
		chromedp.WaitVisible(button+`:not([hidden])`),
		chromedp.Poll(`document.querySelector('`+button+`').textContent.startsWith('Copied')`, nil),
		chromedp.Text(button, &label),
		chromedp.Evaluate(`navigator.clipboard.readText()`, &copied, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
			return p.WithAwaitPromise(true)
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	if copied != w.endpoint {
		t.Errorf("the clipboard holds %q, want the endpoint's whole id %q", copied, w.endpoint)
	}
}
