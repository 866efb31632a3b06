package server

func (s *Server) registerEnvironmentRoutes() {}
