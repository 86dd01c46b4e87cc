package kubetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// kinds maps the kinds of deploy/ manifests to their resources; namespaced
// says whether objects of the kind live in a namespace.
var kinds = map[string]struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}{
	"Namespace":          {schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, false},
	"ServiceAccount":     {schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, true},
	"ClusterRole":        {schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, false},
	"ClusterRoleBinding": {schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}, false},
	"Role":               {schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}, true},
	"RoleBinding":        {schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}, true},
	"Deployment":         {schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, true},
}

// Apply creates every object of a multi-document YAML file; objects that
// exist already are left as they are.
func (c *Cluster) Apply(ctx context.Context, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	dec := yaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("decoding %s: %w", path, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		k, ok := kinds[obj.GetKind()]
		if !ok {
			return fmt.Errorf("%s: kind %s not known to kubetest.Apply", path, obj.GetKind())
		}
		r := c.Dynamic.Resource(k.gvr)
		if k.namespaced {
			_, err = r.Namespace(obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{})
		} else {
			_, err = r.Create(ctx, obj, metav1.CreateOptions{})
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: creating %s %s: %w", path, obj.GetKind(), obj.GetName(), err)
		}
	}
}
