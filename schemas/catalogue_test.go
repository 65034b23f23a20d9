package schemas

import (
	"strings"
	"testing"
)

func TestCatalogueValidatesInvoicePaid(t *testing.T) {
	t.Parallel()
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	e, ok := c.Lookup("stripe", "invoice.paid")
	if !ok {
		t.Fatal("stripe invoice.paid is not in the catalogue")
	}
	if e.Topic != "invoices" || e.ObjectType != "invoice" {
		t.Fatalf("entry = %+v", e)
	}
	good := `{"id":"evt_1","type":"invoice.paid","created":1700000000,"data":{"object":{"id":"in_1","object":"invoice","customer":"cus_1","amount_paid":1000,"status":"paid"}}}`
	if err := e.Validate([]byte(good)); err != nil {
		t.Fatalf("valid event rejected: %v", err)
	}
	for name, body := range map[string]string{
		"not json":        `{"id":`,
		"missing object":  `{"id":"evt_1","type":"invoice.paid","created":1,"data":{}}`,
		"amount as text":  `{"id":"evt_1","type":"invoice.paid","created":1,"data":{"object":{"id":"in_1","object":"invoice","customer":"c","amount_paid":"10","status":"paid"}}}`,
		"wrong type name": `{"id":"evt_1","type":"invoice.created","created":1,"data":{"object":{"id":"in_1","object":"invoice","customer":"c","amount_paid":1,"status":"paid"}}}`,
	} {
		if err := e.Validate([]byte(body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, ok := c.Lookup("stripe", "balance.available"); ok {
		t.Error("an unknown type was found")
	}
}

// Every integer of every schema is one a consumer can read into an int64:
// the standard's wider "integer" (1e2, 100.0, 1e400) would pass ingest and
// then be dead-lettered.
func TestIntegersAreThoseAnInt64Holds(t *testing.T) {
	t.Parallel()
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	e, _ := c.Lookup("stripe", "invoice.paid")
	body := func(amount string) []byte {
		return []byte(`{"id":"evt_1","type":"invoice.paid","created":1700000000,"data":{"object":{"id":"in_1","object":"invoice","customer":"cus_1","amount_paid":` + amount + `,"status":"paid"}}}`)
	}
	for _, ok := range []string{"0", "1000", "9223372036854775807"} {
		if err := e.Validate(body(ok)); err != nil {
			t.Errorf("amount %s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"1e400", "1e2", "100.0", "9223372036854775808", "-0.0e0"} {
		err := e.Validate(body(bad))
		if err == nil {
			t.Errorf("amount %s accepted", bad)
			continue
		}
		if !strings.Contains(err.Error(), "amount_paid") {
			t.Errorf("amount %s: the reason does not say where: %v", bad, err)
		}
	}
}
