package authn_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/authn"
)

func TestParseAuthorization(t *testing.T) {
	const tok = "atr_SECRET"
	for _, tc := range []struct {
		headers []string
		token   string
		says    string // in the error; "" for no error
	}{
		{nil, "", ""},
		{[]string{"Bearer " + tok}, tok, ""},
		{[]string{"bearer  " + tok + " "}, tok, ""},
		{[]string{tok}, "", "Bearer scheme before it is missing"},
		{[]string{"Token " + tok}, "", `the "Token" scheme`},
		{[]string{"Basic YWRtaW46eA=="}, "", `the "Basic" scheme`},
		{[]string{"xyzzy"}, "", "no scheme"},
		{[]string{""}, "", "empty"},
		{[]string{"Bearer"}, "", "token after Bearer is missing"},
		{[]string{"Bearer    "}, "", "token after Bearer is missing"},
		{[]string{"Bearer a b"}, "", "one token"},
		{[]string{"Bearer " + tok, "Bearer " + tok}, "", "one Authorization header"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		for _, h := range tc.headers {
			r.Header.Add("Authorization", h)
		}
		got, err := authn.ParseAuthorization(r)
		if tc.says == "" {
			if err != nil || got != tc.token {
				t.Errorf("%q: %q, %v; want %q", tc.headers, got, err, tc.token)
			}
			continue
		}
		msg := atrium.ErrorMessage(err)
		if atrium.ErrorCode(err) != atrium.EUnauthenticated || !strings.Contains(msg, "Bearer <token>") || !strings.Contains(msg, tc.says) || strings.Contains(msg, tok) {
			t.Errorf("%q: %q, %v; want unauthenticated saying %q, without the token", tc.headers, got, err, tc.says)
		}
	}
}
