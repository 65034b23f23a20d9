package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// The classes Classify returns: short, stable, for metrics labels and
// attempt rows.
const (
	ClassRefusedAddress = "refused_address" // the Policy refused the address
	ClassDNS            = "dns"             // the name did not resolve
	ClassConnect        = "connect"         // no connection: refused, unreachable, or not accepted within ConnectTimeout
	ClassTimeout        = "timeout"         // connected, but the endpoint did not answer in time
	ClassTLS            = "tls"             // handshake failed: certificate not verified, protocol alert
	ClassReset          = "reset"           // the endpoint dropped the connection mid-exchange
	ClassCanceled       = "canceled"        // our context was canceled (shutdown)
	ClassOther          = "other"
)

// Classify says what kind of failure err, from an exchange made with a
// client of this package, is: one of the Class constants, or "" for nil.
// The checks run from the most specific to the least: a dial that timed out
// is "connect", since the endpoint never accepted us, while a timeout once
// connected is "timeout".
func Classify(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrRefusedAddress):
		return ClassRefusedAddress
	case errors.Is(err, context.Canceled):
		return ClassCanceled
	case isDNS(err):
		return ClassDNS
	case isTLS(err):
		return ClassTLS
	case isConnect(err):
		return ClassConnect
	case isTimeout(err):
		return ClassTimeout
	case isReset(err):
		return ClassReset
	}
	return ClassOther
}

func isDNS(err error) bool {
	var e *net.DNSError
	return errors.As(err, &e)
}

func isTLS(err error) bool {
	var (
		verify   *tls.CertificateVerificationError
		record   tls.RecordHeaderError
		alert    tls.AlertError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	return errors.As(err, &verify) || errors.As(err, &record) || errors.As(err, &alert) ||
		errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid)
}

func isConnect(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH)
}

func isTimeout(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded)
}

func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
