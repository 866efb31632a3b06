// Package pgtest gives tests a fresh PostgreSQL database of their own.
//
// The server is named by CANVAS_TEST_POSTGRES, the connection string
// (postgres://... or key=value) of a role that may create databases; .ci/run
// starts a throwaway cluster and sets it (.ci/postgres.sh). Each call of
// New creates a database with a unique name on that server and drops it
// when the test ends. Without the variable a test is skipped, except under
// CI=true, where it fails: CI must not pass by skipping.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvVar names the variable holding the server's connection string.
const EnvVar = "CANVAS_TEST_POSTGRES"

// ServerDSN returns the connection string of the test server. Without
// one it skips tb, or fails it under CI=true.
func ServerDSN(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv(EnvVar)
	if dsn != "" {
		return dsn
	}
	msg := EnvVar + " is not set: these tests need a PostgreSQL server (the connection string of a role " +
		"that may create databases, for example postgres://postgres@127.0.0.1:5432/postgres); .ci/postgres.sh starts one"
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
	return ""
}

// New creates a fresh, empty database on the test server, registers its
// removal with tb.Cleanup, and returns its connection string. Without a
// server it skips tb, or fails it under CI=true.
func New(tb testing.TB) string {
	tb.Helper()
	server := ServerDSN(tb)
	cfg, err := pgx.ParseConfig(server)
	if err != nil {
		tb.Fatalf("%s: %v", EnvVar, err)
	}
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	name := "canvas_test_" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		tb.Fatalf("connect to the test server (%s): %v", EnvVar, err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(ctx, `CREATE DATABASE `+name); err != nil {
		tb.Fatalf("create database %s: %v", name, err)
	}
	tb.Cleanup(func() { drop(tb, cfg, name) })
	return WithDatabase(server, name)
}

// drop removes the database, ending the sessions still connected to it.
func drop(tb testing.TB, cfg *pgx.ConnConfig, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		tb.Errorf("drop database %s: %v", name, err)
		return
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
		tb.Errorf("drop database %s: %v", name, err)
	}
}

// WithDatabase returns the connection string dsn (a postgres:// URL or
// key=value pairs) with its database replaced by name; every other
// setting is kept.
func WithDatabase(dsn, name string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + name
		u.RawPath = ""
		return u.String()
	}
	// In key=value form the last value of a key wins.
	return dsn + " dbname=" + name
}
