package consumers_test

import (
	"os"
	"testing"

	"github.com/sluicehq/sluice/internal/consumers/consumertest"
)

func TestMain(m *testing.M) { os.Exit(consumertest.Main(m)) }
