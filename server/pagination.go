package server

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/promptcanvas/promptcanvas/client/wire"
)

// pageParam is one filter of a paginated list, repeated in every link so
// that following a link lists the same thing.
type pageParam struct {
	Name, Value string
}

// pageRequest is what a paginated list was asked for: its filters in the
// order links repeat them, and the page bounds actually used.
type pageRequest struct {
	Filters     []pageParam
	Limit       int
	Offset      int
	ObjectLinks bool
}

// pageLink is a link to one page of a list (wire.PageLinks): a query
// string by default, or an object {limit, offset, ...filters} when the
// caller asked for objectLinks.
type pageLink struct {
	req    *pageRequest
	offset int
}

// raw returns the link's JSON: a query string starting with the filters,
// then limit and offset, or an object.
func (l pageLink) raw() json.RawMessage {
	if l.req.ObjectLinks {
		obj := make(map[string]any, len(l.req.Filters)+2)
		for _, f := range l.req.Filters {
			obj[f.Name] = f.Value
		}
		obj["limit"] = l.req.Limit
		obj["offset"] = l.offset
		raw, _ := json.Marshal(obj) // strings and ints always encode
		return raw
	}
	var b strings.Builder
	for _, f := range l.req.Filters {
		b.WriteString(sep(b.Len()))
		b.WriteString(url.QueryEscape(f.Name))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(f.Value))
	}
	b.WriteString(sep(b.Len()))
	b.WriteString("limit=" + strconv.Itoa(l.req.Limit))
	b.WriteString("&offset=" + strconv.Itoa(l.offset))
	raw, _ := json.Marshal(b.String())
	return raw
}

func sep(n int) string {
	if n == 0 {
		return "?"
	}
	return "&"
}

// newPage builds the envelope of one page. total counts the whole list;
// lastRef is the sequence number of the page's last item, or nil when the
// page is empty.
//
// currentPage is offset/limit+1. totalPages is ceil(total/limit) but at
// least 1: an empty list is one empty page, so first and last both point at
// offset 0. last points at the start of the last whole page; next is null
// when no item follows this page, previous is null at offset 0 and otherwise
// points one page back, but never past the last page.
func newPage[T any](items []T, total int, lastRef *int64, req pageRequest) wire.Page[T] {
	if items == nil {
		items = []T{}
	}
	limit := max(req.Limit, 1)
	req.Limit = limit
	totalPages := max((total+limit-1)/limit, 1)
	lastOffset := (totalPages - 1) * limit
	meta := wire.PageMeta{
		TotalCount:    total,
		Limit:         limit,
		Offset:        req.Offset,
		CurrentPage:   req.Offset/limit + 1,
		TotalPages:    totalPages,
		LastReference: lastRef,
		Links: wire.PageLinks{
			First: pageLink{req: &req, offset: 0}.raw(),
			Last:  pageLink{req: &req, offset: lastOffset}.raw(),
		},
	}
	if req.Offset+limit < total {
		meta.Links.Next = pageLink{req: &req, offset: req.Offset + limit}.raw()
	}
	if req.Offset > 0 {
		meta.Links.Previous = pageLink{req: &req, offset: max(min(req.Offset-limit, lastOffset), 0)}.raw()
	}
	return wire.Page[T]{Data: items, Meta: meta}
}
