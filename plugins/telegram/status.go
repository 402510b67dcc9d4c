package telegram

import (
	"errors"
	"net/http"

	"github.com/clawhost/clawhost/sdk/status"
)

// What the receive loop tells the operator (sdk/status), from the outcome
// of its Bot API calls (getMe, getUpdates, setWebhook):
//
//	success                          → ready
//	401 Unauthorized                 → needs_attention, link to @BotFather
//	404 Not Found                    → needs_attention (malformed token or
//	                                   wrong api_endpoint)
//	409 Conflict                     → degraded (another poller, a webhook)
//	network failure, timeout, 5xx,
//	malformed answer                 → degraded, with why
//	429 Too Many Requests            → unchanged (it waits as asked)
//
// Each failure is still retried with the backoff of its class (see
// retrier): a rejected token at most every 10 minutes, so the plugin sits
// in needs_attention without hammering the API.

// botFatherURL is where a bot token is made or renewed.
const botFatherURL = "https://t.me/BotFather"

// Messages of the reported states. Never the token.
const (
	msgTokenRejected = "Telegram rejected the bot token (401 Unauthorized). Get a new token from @BotFather and put it in TELEGRAM_BOT_TOKEN " +
		"(or wherever the plugin block's token comes from), then restart clawhost; a token written in the config file takes effect with a reload (SIGHUP)."
	msgNotFound = "Telegram answered 404 Not Found: the bot token is malformed or api_endpoint is wrong. Check both in the plugin block, then reload (SIGHUP)."
	msgConflict = "Telegram refused getUpdates (409 Conflict): another program polls with this bot token, or a webhook is set. " +
		"Stop the other poller or delete the webhook (or set webhook_listen); retrying by itself meanwhile."
	msgUnreachable = "Cannot reach the Telegram Bot API; retrying by itself. Cause: "
)

// reportReady tells the host the Bot API answers.
func (a *Adapter) reportReady() {
	a.status.Report(status.Status{State: status.Ready})
}

// reportFailure tells the host what a failed Bot API call of the receive
// loop means for the operator.
func (a *Adapter) reportFailure(err error) {
	var e *apiError
	if !errors.As(err, &e) {
		a.status.Report(status.Status{State: status.Degraded, Message: msgUnreachable + err.Error()})
		return
	}
	switch {
	case e.Code == http.StatusUnauthorized:
		a.status.Report(status.Status{State: status.NeedsAttention, Message: msgTokenRejected,
			Attention: &status.Attention{Kind: status.Link, Data: botFatherURL}})
	case e.Code == http.StatusNotFound:
		a.status.Report(status.Status{State: status.NeedsAttention, Message: msgNotFound})
	case e.Code == http.StatusConflict:
		a.status.Report(status.Status{State: status.Degraded, Message: msgConflict})
	case e.Code == http.StatusTooManyRequests:
		// Telegram said how long to wait; nothing for the operator.
	default:
		a.status.Report(status.Status{State: status.Degraded, Message: msgUnreachable + e.Error()})
	}
}
