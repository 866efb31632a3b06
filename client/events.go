package client

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// event is one server-sent event.
type event struct {
	id, name, data string
}

// errStop ends readEvents without an error.
var errStop = fmt.Errorf("stop")

// readEvents reads server-sent events from r and calls fn with each, until
// r ends or fn returns an error (errStop ends it cleanly).
func readEvents(r io.Reader, fn func(event) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	var ev event
	var data []string
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if len(data) > 0 || ev.name != "" {
				ev.data = strings.Join(data, "\n")
				if err := fn(ev); err != nil {
					if err == errStop {
						return nil
					}
					return err
				}
			}
			ev, data = event{}, nil
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.id = value
		case "event":
			ev.name = value
		case "data":
			data = append(data, value)
		}
	}
	return sc.Err()
}
