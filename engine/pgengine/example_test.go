package pgengine_test

import (
	"context"
	"log"
	"os"

	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/engine/pgengine"
)

// Example opens an Engine on the PostgreSQL database that DATABASE_URL
// names, as each replica of a deployment does, and runs its share of the
// background work until the program ends.
func Example() {
	ctx := context.Background()
	e, err := pgengine.Open(ctx, os.Getenv("DATABASE_URL"), engine.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	go e.Run(ctx)
	// Serve e's services: in-process, or over HTTP with server.New.
}
