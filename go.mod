module github.com/corral-sched/corral

go 1.26

require gonum.org/v1/gonum v0.17.0

require go.yaml.in/yaml/v3 v3.0.6
