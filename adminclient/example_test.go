package adminclient_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/google/uuid"

	"github.com/sluicehq/sluice/adminclient"
)

// A tenant and its Stripe source, made as an operator's backend makes them
// when a customer signs up and connects Stripe.
func Example() {
	ctx := context.Background()
	c, err := adminclient.New("http://127.0.0.1:8082", os.Getenv("SLUICE_ADMIN_TOKEN"))
	if err != nil {
		panic(err)
	}
	tenant, err := c.CreateTenantWithResponse(ctx, nil, adminclient.TenantCreateInBody{Name: "acme"})
	if err != nil {
		panic(err)
	}
	secret := "whsec_from_stripe"
	source, err := c.CreateSourceWithResponse(ctx, nil, adminclient.NewSourceBody{TenantId: uuid.MustParse(tenant.JSON201.Id),
		Kind: adminclient.NewSourceBodyKindStripe, Account: "acct_123", Secret: &secret})
	if err != nil {
		panic(err)
	}
	fmt.Println("Stripe sends to /v1/ingest/" + source.JSON201.Id)
}

// Every dead delivery of a tenant, across pages.
func ExampleClient_ListDeliveriesAll() {
	ctx := context.Background()
	c, _ := adminclient.New("http://127.0.0.1:8082", os.Getenv("SLUICE_ADMIN_TOKEN"))
	tenant := uuid.MustParse("0b7c6f9e-3f5e-4c1e-9a43-3f2d2f6f0c11")
	dead := adminclient.ListDeliveriesParamsStateDead
	for d, err := range c.ListDeliveriesAll(ctx, adminclient.ListDeliveriesParams{TenantId: &tenant, State: &dead}) {
		if err != nil {
			panic(err)
		}
		fmt.Println(d.EventId, d.LastStatus)
	}
}

// A refusal is a *Problem: the API's problem detail.
func ExampleProblem() {
	ctx := context.Background()
	c, _ := adminclient.New("http://127.0.0.1:8082", os.Getenv("SLUICE_ADMIN_TOKEN"))
	_, err := c.GetTenantWithResponse(ctx, uuid.New())
	var p *adminclient.Problem
	if errors.As(err, &p) {
		fmt.Println(*p.Status, *p.Title)
	}
}

// A create sent twice under one Idempotency-Key makes one tenant: the
// second answer is the first's.
func ExampleIdempotencyKey() {
	ctx := context.Background()
	c, _ := adminclient.New("http://127.0.0.1:8082", os.Getenv("SLUICE_ADMIN_TOKEN"))
	key := adminclient.IdempotencyKey() // kept with the signup, so a retry after a crash sends it again
	a, _ := c.CreateTenantWithResponse(ctx, &adminclient.CreateTenantParams{IdempotencyKey: &key}, adminclient.TenantCreateInBody{Name: "acme"})
	b, _ := c.CreateTenantWithResponse(ctx, &adminclient.CreateTenantParams{IdempotencyKey: &key}, adminclient.TenantCreateInBody{Name: "acme"})
	fmt.Println(a.JSON201.Id == b.JSON201.Id)
}
