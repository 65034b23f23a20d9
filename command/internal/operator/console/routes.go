package console

import "net/http"

// routes are the console's pages and actions. Every action is a POST of
// a form (CSRF-checked by signedIn) answered with a redirect to a page.
func (c *Console) routes() {
	m := c.mux
	m.Handle("GET "+Prefix+"/static/", c.static())
	if c.cfg.Portal != nil {
		c.portalRoutes()
	} else {
		m.HandleFunc("GET "+Prefix+"/sign-in", c.signInPage)
		m.HandleFunc("POST "+Prefix+"/sign-in", c.signIn)
	}
	m.HandleFunc("POST "+Prefix+"/sign-out", c.signedIn(c.signOut))
	m.HandleFunc("GET "+Prefix, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix+"/", http.StatusMovedPermanently)
	})
	m.HandleFunc("GET "+Prefix+"/{$}", c.signedIn(c.home))
	m.HandleFunc(Prefix+"/", c.signedIn(func(w http.ResponseWriter, r *http.Request, s Session) error {
		c.render(w, r, http.StatusNotFound, "error", view{Title: "Not found", Session: &s, Error: "Nothing is served at " + r.URL.Path + "."})
		return nil
	}))
	c.eventRoutes()
	c.deadLetterRoutes()
	c.groupRoutes()
	c.catalogueRoutes()
	c.eventTypeRoutes()
	c.destinationRoutes()
	c.reconcileRoutes()
	c.sourceRoutes()
}
