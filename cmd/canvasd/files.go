package main

import (
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/promptcanvas/promptcanvas/vault"
)

// fileConfig is the vault's part of the configuration.
type fileConfig struct {
	// UploadURLLifetime is how long an upload URL works
	// (--upload-url-lifetime, CANVAS_UPLOAD_URL_LIFETIME, a Go duration).
	UploadURLLifetime time.Duration
	// MaxFileSize bounds an upload, in bytes (--max-file-size,
	// CANVAS_MAX_FILE_SIZE).
	MaxFileSize int64
}

// fileFlags registers the vault's flags, with their environment variables
// as defaults; a malformed environment value is an error.
func (c *fileConfig) fileFlags(fs *flag.FlagSet, env func(string) string) error {
	lifetime, size := vault.DefaultURLLifetime, int64(vault.DefaultMaxSize)
	if v := env("CANVAS_UPLOAD_URL_LIFETIME"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("CANVAS_UPLOAD_URL_LIFETIME: %q is not a positive duration", v)
		}
		lifetime = d
	}
	if v := env("CANVAS_MAX_FILE_SIZE"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("CANVAS_MAX_FILE_SIZE: %q is not a positive number of bytes", v)
		}
		size = n
	}
	fs.DurationVar(&c.UploadURLLifetime, "upload-url-lifetime", lifetime,
		"how long an upload URL works (env CANVAS_UPLOAD_URL_LIFETIME)")
	fs.Int64Var(&c.MaxFileSize, "max-file-size", size,
		"largest file upload in `bytes` (env CANVAS_MAX_FILE_SIZE)")
	return nil
}
