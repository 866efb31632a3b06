package completion

import (
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// checkWebhookURL returns VALIDATION at /json/webhook_url unless url is
// empty or can be a webhook endpoint (webhook.CheckURL: an absolute http or
// https URL with a host), so that a URL no delivery could use is refused
// when the run is asked for, as an application's subscription URL is,
// rather than failing every delivery later. Whether its address is public
// is still decided when it is dialled.
func checkWebhookURL(url string) error {
	if url == "" {
		return nil
	}
	if err := webhook.CheckURL(url); err != nil {
		return canvas.Invalid("Request failed validation.",
			canvas.Detail{Path: "/json/webhook_url", Message: "must be an absolute http or https URL with a host"})
	}
	return nil
}
