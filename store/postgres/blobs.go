package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/vault"
)

// Compile-time checks that Blobs is blob storage.
var (
	_ vault.Blobs         = (*Blobs)(nil)
	_ vault.PrefixDeleter = (*Blobs)(nil)
)

// blobChunkSize is the size of a stored chunk of a blob, and so the memory
// a Put or an open blob holds, whatever the size of the file.
const blobChunkSize = 256 << 10

// Blobs keeps the bytes of uploaded files in the database, as numbered
// chunks of a blob_chunks row each, so that every replica on the database
// reads every upload and nothing else needs to be shared. A Put streams its
// body chunk by chunk into one transaction, which replaces what the key
// held: a reader sees the whole blob or none of it. An open blob reads one
// chunk a query, so that neither side holds more than a chunk in memory
// nor a connection between reads.
type Blobs struct {
	pool *pgxpool.Pool
}

// Blobs returns blob storage in the store's database.
func (db *DB) Blobs() *Blobs { return &Blobs{pool: db.pool} }

// Put implements vault.Blobs.
func (b *Blobs) Put(ctx context.Context, key string, r io.Reader, limit int64) (size int64, sum string, err error) {
	if err := ctx.Err(); err != nil {
		return 0, "", err
	}
	if key == "" {
		return 0, "", canvas.NotFound("file")
	}
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		return 0, "", err
	}
	defer rollback(tx)
	if _, err := tx.Exec(ctx, `DELETE FROM blob_chunks WHERE key = $1`, key); err != nil {
		return 0, "", err
	}
	h := sha256.New()
	buf := make([]byte, blobChunkSize)
	body := io.LimitReader(r, limit+1)
	for n := int64(0); ; n++ {
		if err := ctx.Err(); err != nil {
			return 0, "", err
		}
		got, rerr := io.ReadFull(body, buf)
		if rerr != nil && !errors.Is(rerr, io.EOF) && !errors.Is(rerr, io.ErrUnexpectedEOF) {
			return 0, "", rerr
		}
		size += int64(got)
		if size > limit {
			return 0, "", canvas.Errorf(canvas.EPAYLOADTOOLARGE, "The file is larger than %d bytes.", limit)
		}
		// Chunk 0 is written even when empty: it is what says the blob
		// exists.
		if got > 0 || n == 0 {
			h.Write(buf[:got])
			if _, err := tx.Exec(ctx, `INSERT INTO blob_chunks (key, n, data) VALUES ($1, $2, $3)`,
				key, n, buf[:got]); err != nil {
				return 0, "", translate(err) // a concurrent Put of the key: CONFLICT
			}
		}
		if rerr != nil { // the body ended
			break
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, "", err
	}
	return size, hex.EncodeToString(h.Sum(nil)), nil
}

// Open implements vault.Blobs.
func (b *Blobs) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	var last *int64
	if err := b.pool.QueryRow(ctx, `SELECT MAX(n) FROM blob_chunks WHERE key = $1`, key).Scan(&last); err != nil {
		return nil, err
	}
	if last == nil {
		return nil, canvas.NotFound("file")
	}
	return &blobReader{ctx: context.WithoutCancel(ctx), pool: b.pool, key: key, last: *last}, nil
}

// Delete implements vault.Blobs.
func (b *Blobs) Delete(ctx context.Context, key string) error {
	_, err := b.pool.Exec(ctx, `DELETE FROM blob_chunks WHERE key = $1`, key)
	return err
}

// DeletePrefix implements vault.PrefixDeleter: it removes every blob whose
// key starts with prefix; an empty prefix removes nothing.
func (b *Blobs) DeletePrefix(ctx context.Context, prefix string) error {
	if prefix == "" {
		return nil
	}
	_, err := b.pool.Exec(ctx, `DELETE FROM blob_chunks WHERE starts_with(key, $1)`, prefix)
	return err
}

// blobReader reads a blob chunk by chunk. The vault writes each key once
// (every upload has a key of its own), so the chunks read one query at a
// time belong to one Put; a blob deleted while it is read ends with
// io.ErrUnexpectedEOF.
type blobReader struct {
	ctx  context.Context
	pool *pgxpool.Pool
	key  string
	last int64 // the number of the last chunk

	next  int64  // the chunk to fetch next
	chunk []byte // what is left of the chunk fetched last
}

func (r *blobReader) Read(p []byte) (int, error) {
	for len(r.chunk) == 0 {
		if r.next > r.last {
			return 0, io.EOF
		}
		var data []byte
		err := r.pool.QueryRow(r.ctx, `SELECT data FROM blob_chunks WHERE key = $1 AND n = $2`, r.key, r.next).Scan(&data)
		if err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return 0, io.ErrUnexpectedEOF
			}
			return 0, err
		}
		r.chunk, r.next = data, r.next+1
	}
	n := copy(p, r.chunk)
	r.chunk = r.chunk[n:]
	return n, nil
}

func (r *blobReader) Close() error {
	r.chunk, r.next = nil, r.last+1
	return nil
}
