module github.com/agenta-go/agenta

go 1.24

require (
	github.com/google/go-querystring v1.2.0 // indirect
	github.com/h2non/parth v0.0.0-20190131123155-b4df798d6542 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/hashicorp/go-retryablehttp v0.7.8 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	gopkg.in/h2non/gock.v1 v1.1.2 // indirect
)
