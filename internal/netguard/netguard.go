// Package netguard keeps outbound requests made on a user's behalf (webhook
// deliveries, public file URLs) away from the service's own network: the
// loopback interface, private and link-local ranges, and the other
// addresses that are never a public endpoint.
//
// The check runs on the dialer, against the address actually being dialled,
// after name resolution: a name that resolves to a public address when it is
// checked and to a private one when it is dialled (DNS rebinding) is still
// refused. Proxies are disabled for the same reason.
package netguard

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// ErrBlocked is the cause of every refusal: errors.Is(err, ErrBlocked)
// reports whether a request failed because of the guard.
var ErrBlocked = errors.New("netguard: address not allowed")

// blocked lists the ranges that are refused besides the ones the netip
// predicates name (loopback, private, link-local, multicast, unspecified).
var blocked = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),  // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, and broadcast
	netip.MustParsePrefix("64:ff9b::/96"),   // NAT64: may embed any IPv4
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
	netip.MustParsePrefix("2002::/16"),      // 6to4: may embed any IPv4
	netip.MustParsePrefix("100::/64"),       // discard-only
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
	netip.MustParsePrefix("fec0::/10"),      // deprecated site-local
	netip.MustParsePrefix("2001::/32"),      // Teredo: may embed any IPv4
	netip.MustParsePrefix("255.255.255.255/32"),
}

// Public reports whether ip may be reached when private networks are not
// allowed: it is none of loopback, private (RFC 1918, fc00::/7), link-local,
// unspecified, multicast, carrier-grade NAT (100.64.0.0/10) or another
// special-purpose range. An IPv4-mapped IPv6 address is judged as IPv4.
func Public(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() || ip.IsMulticast() ||
		ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() {
		return false
	}
	ip = ip.WithZone("")
	for _, p := range blocked {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// Control is a net.Dialer Control function that refuses to connect to an
// address that is not Public. It sees the resolved address of every
// connection attempt, including each address a name resolves to.
func Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q is not an IP address", ErrBlocked, address)
	}
	if !Public(ap.Addr()) {
		return fmt.Errorf("%w: %s is not a public address", ErrBlocked, ap.Addr())
	}
	return nil
}

// Dialer returns a dialer that, unless allowPrivate, refuses every address
// that is not Public.
func Dialer(allowPrivate bool) *net.Dialer {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = Control
	}
	return d
}

// Transport returns an HTTP transport that dials through Dialer(allowPrivate)
// and never uses a proxy (a proxy would dial the destination on its own,
// out of the guard's sight).
func Transport(allowPrivate bool) *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           Dialer(allowPrivate).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// Client returns an HTTP client that dials through Transport(allowPrivate),
// gives up after timeout (no limit when zero), and does not follow
// redirects: a 3xx is returned as it is, so that a public endpoint cannot
// bounce a request to an address the caller did not choose.
func Client(allowPrivate bool, timeout time.Duration) *http.Client {
	return &http.Client{
		Transport: Transport(allowPrivate),
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// CheckURL returns an error unless raw is an absolute http or https URL
// with a host. It does not resolve the host: the dialer checks the address.
func CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("netguard: invalid URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("netguard: URL scheme %q is not http or https", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, errors.New("netguard: URL has no host")
	}
	return u, nil
}
