module evident

go 1.26.8

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/text v0.44.0
)

require github.com/urfave/cli/v3 v3.14.0 // indirect
