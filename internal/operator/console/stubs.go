package console

func (c *Console) groupRoutes()     {}
func (c *Console) catalogueRoutes() {}
