package wire

import "encoding/json"

// Page is the pagination envelope of a list: the items of one page and the
// meta that locates it in the whole list.
type Page[T any] struct {
	Data []T      `json:"data"`
	Meta PageMeta `json:"meta"`
}

// PageMeta locates a page: the total, its bounds and position, and links
// to other pages of the same list.
type PageMeta struct {
	TotalCount  int `json:"totalCount"`
	Limit       int `json:"limit"`
	Offset      int `json:"offset"`
	CurrentPage int `json:"currentPage"`
	TotalPages  int `json:"totalPages"`
	// LastReference is the sequence number of the last item on the page;
	// absent when the page is empty or the list has no sequence.
	LastReference *int64    `json:"lastReference,omitempty"`
	Links         PageLinks `json:"links"`
}

// PageLinks point at other pages of the same list. Each is a query string
// ("?limit=20&offset=40", the list's filters first) or, when the list was
// asked for objectLinks, an object {limit, offset, ...filters}; Next and
// Previous are null when there is no such page.
type PageLinks struct {
	First    json.RawMessage `json:"first"`
	Last     json.RawMessage `json:"last"`
	Next     json.RawMessage `json:"next"`
	Previous json.RawMessage `json:"previous"`
}
