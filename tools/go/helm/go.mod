// Wrapper module: helm (the chart engine the operator runs as `helm template`; the tests also package and push charts with it).
module example.com/myapp/tools/helm

go 1.26.0

require helm.sh/helm/v4 v4.3.2 // indirect
