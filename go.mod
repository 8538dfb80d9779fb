module redline

go 1.26.8

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0
	github.com/google/go-cmp v0.7.0
	github.com/safchain/ethtool v0.7.0
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/sys v0.50.0
	golang.org/x/term v0.48.0
)

require github.com/inconshreveable/mousetrap v1.1.0 // indirect
