package env

// CacheStats returns how many reads of the served-version cache were
// served from it (hits) and how many read the store (misses), since the
// Service was made; both are zero when nothing is cached.
func (s *Service) CacheStats() (hits, misses uint64) {
	st := s.served.Stats()
	return st.Hits, st.Misses
}
