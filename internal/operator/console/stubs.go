package console

func (c *Console) eventRoutes()      {}
func (c *Console) deadLetterRoutes() {}
func (c *Console) groupRoutes()      {}
func (c *Console) catalogueRoutes()  {}
