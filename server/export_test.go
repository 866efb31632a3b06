package server

// RoutePatterns returns the pattern ("METHOD /path") of every route a
// Server registers, so that the tests of package server_test can check
// that their tables cover the server's route list.
func RoutePatterns() ([]string, error) {
	s, err := newServer(Options{})
	if err != nil {
		return nil, err
	}
	return s.patterns, nil
}
