package runner

import (
	"testing"
	"time"
)

func TestRateWindow(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		headers map[string]string
		want    Window
	}{
		{"none", nil, Window{}},
		{"openai requests left", map[string]string{
			"x-ratelimit-remaining-requests": "12", "x-ratelimit-reset-requests": "6m0s"}, Window{}},
		{"openai requests spent", map[string]string{
			"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "6m0s",
			"x-ratelimit-remaining-tokens": "1200", "x-ratelimit-reset-tokens": "20ms"}, Window{Spent: true, Reset: 6 * time.Minute}},
		{"openai tokens spent", map[string]string{
			"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "1.5s"}, Window{Spent: true, Reset: 1500 * time.Millisecond}},
		{"both spent: the later reset", map[string]string{
			"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "2s",
			"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "17s"}, Window{Spent: true, Reset: 17 * time.Second}},
		{"anthropic", map[string]string{
			"anthropic-ratelimit-requests-remaining": "40", "anthropic-ratelimit-requests-reset": "2026-01-01T00:00:59Z",
			"anthropic-ratelimit-input-tokens-remaining": "0", "anthropic-ratelimit-input-tokens-reset": "2026-01-01T00:00:30Z"},
			Window{Spent: true, Reset: 30 * time.Second}},
		{"openrouter epoch ms", map[string]string{
			"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1767225612000"}, Window{Spent: true, Reset: 12 * time.Second}},
		{"ietf seconds", map[string]string{"RateLimit-Remaining": "0", "RateLimit-Reset": "7"}, Window{Spent: true, Reset: 7 * time.Second}},
		{"spent, no reset", map[string]string{"x-ratelimit-remaining-requests": "0"}, Window{Spent: true}},
		{"reset passed", map[string]string{
			"anthropic-ratelimit-tokens-remaining": "0", "anthropic-ratelimit-tokens-reset": "2025-12-31T23:59:00Z"}, Window{Spent: true}},
		{"absurd reset is capped", map[string]string{
			"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "900h"}, Window{Spent: true, Reset: 24 * time.Hour}},
		{"garbage", map[string]string{
			"x-ratelimit-remaining-requests": "none", "x-ratelimit-reset-requests": "soon"}, Window{}},
		{"limit headers are not remaining", map[string]string{
			"x-ratelimit-limit-requests": "0", "x-ratelimit-reset-requests": "1s"}, Window{}},
	}
	for _, tt := range tests {
		if got := rateWindow(headerOf(tt.headers), now); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
