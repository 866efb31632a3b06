package server

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
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

// pageMeta is the meta object of the pagination envelope.
type pageMeta struct {
	TotalCount  int `json:"totalCount"`
	Limit       int `json:"limit"`
	Offset      int `json:"offset"`
	CurrentPage int `json:"currentPage"`
	TotalPages  int `json:"totalPages"`
	// LastReference is the sequence number of the last item on the page;
	// it is omitted when the page is empty.
	LastReference *int64    `json:"lastReference,omitempty"`
	Links         pageLinks `json:"links"`
}

// pageLinks point at other pages of the same list. Each is a pageLink, or
// nil (written as null) for a next or previous page that does not exist.
type pageLinks struct {
	First    *pageLink `json:"first"`
	Last     *pageLink `json:"last"`
	Next     *pageLink `json:"next"`
	Previous *pageLink `json:"previous"`
}

// pageLink is a link to one page: a query string by default, or an object
// {limit, offset, ...filters} when the caller asked for objectLinks.
type pageLink struct {
	req    *pageRequest
	offset int
}

// MarshalJSON writes the link as a query string starting with the filters,
// then limit and offset, or as an object.
func (l *pageLink) MarshalJSON() ([]byte, error) {
	if l.req.ObjectLinks {
		obj := make(map[string]any, len(l.req.Filters)+2)
		for _, f := range l.req.Filters {
			obj[f.Name] = f.Value
		}
		obj["limit"] = l.req.Limit
		obj["offset"] = l.offset
		return json.Marshal(obj)
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
	return json.Marshal(b.String())
}

func sep(n int) string {
	if n == 0 {
		return "?"
	}
	return "&"
}

// pageEnvelope is the pagination envelope of the specification: the items of
// one page and the meta that locates it in the whole list.
type pageEnvelope[T any] struct {
	Data []T      `json:"data"`
	Meta pageMeta `json:"meta"`
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
func newPage[T any](items []T, total int, lastRef *int64, req pageRequest) pageEnvelope[T] {
	if items == nil {
		items = []T{}
	}
	limit := max(req.Limit, 1)
	req.Limit = limit
	totalPages := max((total+limit-1)/limit, 1)
	lastOffset := (totalPages - 1) * limit
	meta := pageMeta{
		TotalCount:    total,
		Limit:         limit,
		Offset:        req.Offset,
		CurrentPage:   req.Offset/limit + 1,
		TotalPages:    totalPages,
		LastReference: lastRef,
		Links: pageLinks{
			First: &pageLink{req: &req, offset: 0},
			Last:  &pageLink{req: &req, offset: lastOffset},
		},
	}
	if req.Offset+limit < total {
		meta.Links.Next = &pageLink{req: &req, offset: req.Offset + limit}
	}
	if req.Offset > 0 {
		meta.Links.Previous = &pageLink{req: &req, offset: max(min(req.Offset-limit, lastOffset), 0)}
	}
	return pageEnvelope[T]{Data: items, Meta: meta}
}
