// Package freshcache is a bounded cache of values derived from a store,
// each served only while the store proves that nothing was committed since
// the value was built.
//
// Every Get reads the store's data version (canvas.ChangeVersioner) once.
// A value is tagged with the version read before it was built, so the value
// is at least as fresh as its tag, and it is served only when the version
// read now equals the tag: no commit anywhere (in this process or another
// one) has happened since, so the value is what the store would answer now.
// Any commit therefore invalidates every entry at once. The cache trades
// one cheap version read for the reads that build a value; it never trades
// freshness.
package freshcache
