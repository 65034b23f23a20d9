package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// WorkspaceCmd groups workspace administration.
type WorkspaceCmd struct {
	Create  WorkspaceCreateCmd  `cmd:"" help:"Create a workspace mapped from a provider customer; prints its id."`
	List    WorkspaceListCmd    `cmd:"" help:"List workspaces."`
	Get     WorkspaceGetCmd     `cmd:"" help:"Show a workspace, its customers and its balance."`
	Balance WorkspaceBalanceCmd `cmd:"" help:"Print a workspace's credit balance."`
}

// WorkspaceCreateCmd creates a workspace.
type WorkspaceCreateCmd struct {
	Output
	Tenant   string `required:"" help:"Tenant id." input:"uuid"`
	Customer string `required:"" help:"Provider customer id (e.g. cus_...) that maps to this workspace."`
	Name     string `help:"Workspace name." input:"name"`
}

func (c *WorkspaceCreateCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.store(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	id, err := s.CreateWorkspace(ctx, c.Tenant, c.Customer, c.Name)
	if err != nil {
		return err
	}
	return c.print(id, map[string]any{"tenant_id": c.Tenant, "customer": c.Customer, "name": c.Name})
}

// WorkspaceListCmd lists workspaces.
type WorkspaceListCmd struct {
	Output
	Paging
	Tenant   string `help:"Only this tenant's workspaces." input:"uuid"`
	Customer string `help:"Only the workspace this provider customer maps to."`
}

func (c *WorkspaceListCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.store(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	items, next, err := s.Workspaces(ctx, tenancy.WorkspaceFilter{TenantID: c.Tenant, Customer: c.Customer}, c.page())
	if err != nil {
		return err
	}
	return printList(c.Output, items, next, "ID\tTENANT\tNAME\tCUSTOMERS\tCREDITS", func(w tenancy.Workspace) []any {
		return []any{w.ID, w.TenantID, orDash(w.Name), strings.Join(w.Customers, ","), w.Credits}
	})
}

// WorkspaceGetCmd shows one workspace.
type WorkspaceGetCmd struct {
	Output
	ID string `arg:"" name:"workspace-id" help:"Workspace id." input:"uuid"`
}

func (c *WorkspaceGetCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.store(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	w, err := s.Workspace(ctx, c.ID)
	if err != nil {
		return err
	}
	return printOne(c.Output, w, w.ID, field{"tenant", w.TenantID}, field{"name", orDash(w.Name)},
		field{"customers", strings.Join(w.Customers, ", ")}, field{"credits", w.Credits})
}

// WorkspaceBalanceCmd prints a balance; an unknown workspace is an error,
// never a zero.
type WorkspaceBalanceCmd struct {
	Output
	ID string `arg:"" name:"workspace-id" help:"Workspace id." input:"uuid"`
}

func (c *WorkspaceBalanceCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.store(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	credits, err := s.Balance(ctx, c.ID)
	if err != nil {
		return err
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"workspace_id": c.ID, "credits": credits})
	}
	_, err = fmt.Println(credits)
	return err
}
