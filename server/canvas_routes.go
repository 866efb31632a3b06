package server

func (s *Server) registerCanvasRoutes()  {}
func (s *Server) registerProjectRoutes() {}
