package wire

import "time"

// CreateFileRequest is the body of POST /v3/files.
type CreateFileRequest struct {
	FileName string `json:"fileName"`
}

// Upload is the answer to POST /v3/files: where to PUT the file's bytes,
// until when.
type Upload struct {
	ID        string    `json:"id"`
	UploadURL string    `json:"uploadUrl"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// File is an uploaded file's metadata.
type File struct {
	ID          string     `json:"id"`
	FileName    string     `json:"fileName"`
	MimeType    string     `json:"mimeType"`
	Size        int64      `json:"size"`
	SHA256      string     `json:"sha256"`
	Status      string     `json:"status"`
	WorkspaceID string     `json:"workspaceId"`
	CreatedBy   string     `json:"createdBy"`
	CreatedAt   time.Time  `json:"createdAt"`
	UploadedAt  *time.Time `json:"uploadedAt"`
	ExpiresAt   time.Time  `json:"expiresAt"`
}
