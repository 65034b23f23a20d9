package testevent

import (
	"slices"
	"testing"
)

// A masked body keeps its shape, the words that say what the event is,
// and every number to its last digit; every other string is "masked", and
// each is named by its JSON pointer.
func TestMaskKeepsTheShapeAndHidesTheStrings(t *testing.T) {
	t.Parallel()
	body, where, err := mask([]byte(`{"id":"evt_1","type":"invoice.paid","data":{"object":{"object":"invoice","customer_email":"jo@example.com",` +
		`"amount":12345678901234567890,"paid":true,"lines":[{"description":"x","currency":"eur"}],"a/b":"c"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"data":{"object":{"a/b":"masked","amount":12345678901234567890,"customer_email":"masked",` +
		`"lines":[{"currency":"eur","description":"masked"}],"object":"invoice","paid":true}},"id":"masked","type":"invoice.paid"}`
	if string(body) != want {
		t.Errorf("masked:\n%s\nwant\n%s", body, want)
	}
	if w := []string{"/data/object/a~1b", "/data/object/customer_email", "/data/object/lines/0/description", "/id"}; !slices.Equal(where, w) {
		t.Errorf("masked at %q, want %q", where, w)
	}
	if _, _, err := mask([]byte("not json")); err == nil {
		t.Error("a body that is no JSON was masked")
	}
}
