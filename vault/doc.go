// Package vault owns files: the two-step upload (CreateFile issues a
// signed, expiring upload URL; Upload takes the bytes sent to it without
// any other credential), the metadata and bytes of uploaded files, scoped
// to the uploader's workspace, and their removal.
//
// Upload URLs are "{base}/v3/files/{id}/content?expires=<unix>&signature=<s>"
// where s is the base64url HMAC-SHA256 of "<id>.<unix>" under a 32-byte
// secret the Store creates once and keeps, so that URLs survive restarts
// and work on every process sharing the data. A changed id, expiry or
// signature, or an expiry in the past, is FORBIDDEN.
//
// Bytes live behind the Blobs interface; FSBlobs keeps them in a directory,
// written atomically through a temporary file. Each upload writes under its
// own key, so that of two concurrent uploads of one id the one that loses
// the Store's claim (MarkUploaded) removes only its own bytes.
//
// A pending file whose URL expired without an upload is removed by a
// vault.expire queue job that CreateFile writes together with the file;
// HandleExpireJob executes it and leaves uploaded files alone.
//
// A "vault://<id>" address (ParseAddress) names a file in completion
// variables; Open resolves it inside the caller's workspace, and a file of
// another workspace, an unknown one or one never uploaded is NOT_FOUND.
package vault
