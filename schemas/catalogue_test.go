package schemas

import "testing"

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
