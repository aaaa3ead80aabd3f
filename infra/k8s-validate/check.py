"""Validates rendered manifests (kustomize build output, one file per render).

Usage: check.py [--crd=<CustomResourceDefinition file>...] <kubernetes versions, comma separated> <label>=<file> ...
Each object is validated strictly (unknown fields are errors) against the Kubernetes schemas that
kubernetes-validate ships, for every version given. Objects of custom resources (Gateway API,
Envoy Gateway, KEDA, Prometheus Operator) are validated as strictly against the openAPIV3Schema of
their CustomResourceDefinition, read from the --crd files (the projects' own, from their Go
modules: infra/k8s-validate.sh); the CEL rules (x-kubernetes-validations) of those schemas are
counted, not evaluated. A custom resource whose CRD is not given is an error. Custom resources are
also checked here for what the portal relies on. Then the portal's own rules, which no schema knows:
  - a render of the base, an overlay or a component never holds a Secret, except the example
    overlay's, made by its secretGenerator (so apply never overwrites a Secret made by hand);
  - every image of an overlay carries a version tag, never `latest`;
  - no Deployment that an autoscaler manages sets spec.replicas;
  - pods mount no service account token; each emptyDir has a sizeLimit and its container
    requests ephemeral storage;
  - every ConfigMap and Secret a pod refers to is in the render (or optional), and every
    autoscaler, PodMonitor and NetworkPolicy selects something;
  - every object is in the portal's namespace (a ClientTrafficPolicy in its Gateway's);
  - every HTTPRoute sends to a Service port of the render, and every Envoy Gateway policy targets
    an HTTPRoute of the render or the Gateway an HTTPRoute names (in that Gateway's namespace);
  - every PodDisruptionBudget says maxUnavailable, and no component lowers an autoscaler's floor;
  - a KEDA fallback says metricType AverageValue (KEDA 2.17.1 and later refuse a fallback on a
    Value metric, and the default of a redis trigger is AverageValue: written out so a change shows).
Exits 1 with one line per problem.
"""
import copy
import json
import sys
import yaml
import jsonschema
import kubernetes_validate
from kubernetes_validate.utils import SchemaNotFoundError, ValidationError

CUSTOM_GROUPS = {'keda.sh', 'monitoring.coreos.com', 'gateway.networking.k8s.io', 'gateway.envoyproxy.io'}
WORKLOADS = {'Deployment', 'Job', 'StatefulSet', 'DaemonSet'}


def strict(schema):
    """The schema with unknown fields refused, as the API server prunes (and kubectl's
    --validate=strict refuses) them: every object schema with properties and neither
    additionalProperties nor x-kubernetes-preserve-unknown-fields gets additionalProperties: false."""
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: strict(v) if k not in ('enum', 'default', 'example', 'required') else v for k, v in schema.items()}
    if 'properties' in out and 'additionalProperties' not in out and not out.get('x-kubernetes-preserve-unknown-fields'):
        out['additionalProperties'] = False
    return out


def cel_rules(schema):
    if isinstance(schema, list):
        return sum(cel_rules(s) for s in schema)
    if not isinstance(schema, dict):
        return 0
    return len(schema.get('x-kubernetes-validations') or []) + sum(cel_rules(v) for v in schema.values())


def load_crds(paths):
    """(apiVersion, kind) -> (validator, number of CEL rules) for every served version."""
    crds = {}
    for path in paths:
        with open(path) as f:
            for doc in yaml.safe_load_all(f):
                if not doc or doc.get('kind') != 'CustomResourceDefinition':
                    continue
                group, kind = doc['spec']['group'], doc['spec']['names']['kind']
                for version in doc['spec']['versions']:
                    if not version.get('served', True):
                        continue
                    schema = strict(copy.deepcopy(version['schema']['openAPIV3Schema']))
                    # OpenAPI 3.0 schemas are JSON Schema draft 4 (boolean exclusiveMinimum).
                    crds[(f"{group}/{version['name']}", kind)] = (jsonschema.Draft4Validator(schema), cel_rules(schema))
    return crds


def name(obj):
    return f"{obj['kind']}/{obj['metadata']['name']}"


def pod_of(obj):
    if obj['kind'] == 'CronJob':
        return obj['spec']['jobTemplate']['spec']['template']
    return obj['spec']['template'] if obj['kind'] in WORKLOADS else None


def labels_match(selector, labels):
    for key, value in (selector.get('matchLabels') or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get('matchExpressions') or []:
        have = labels.get(expr['key'])
        if expr['operator'] == 'In' and have not in expr['values']:
            return False
        if expr['operator'] == 'NotIn' and have in expr['values']:
            return False
        if expr['operator'] == 'Exists' and have is None:
            return False
    return True


def check_custom(obj, objects, problems):
    kind, spec = obj['kind'], obj.get('spec') or {}
    deployments = {o['metadata']['name']: o for o in objects if o['kind'] == 'Deployment'}
    if kind in ('PodMonitor', 'ServiceMonitor', 'PrometheusRule') and not obj['metadata'].get('labels'):
        problems.append(f"{name(obj)}: carries no label a Prometheus Operator could select it by (prometheus-selector-labels)")
    if kind == 'ScaledObject':
        target = (spec.get('scaleTargetRef') or {}).get('name')
        if target not in deployments:
            problems.append(f"{name(obj)}: scaleTargetRef {target!r} is no Deployment of the render")
        if not spec.get('triggers'):
            problems.append(f"{name(obj)}: no triggers")
        for hpa in objects:
            if hpa['kind'] == 'HorizontalPodAutoscaler' and hpa['spec']['scaleTargetRef']['name'] == target:
                problems.append(f"{name(obj)}: {name(hpa)} scales {target} too (two autoscalers fight)")
        if spec.get('fallback'):
            for trigger in spec.get('triggers') or []:
                if trigger['type'] not in ('cpu', 'memory') and trigger.get('metricType') != 'AverageValue':
                    problems.append(f"{name(obj)}: trigger {trigger['type']} has a fallback but metricType {trigger.get('metricType')!r}, not AverageValue (KEDA 2.17.1+ refuses it)")
    elif kind in ('PodMonitor', 'ServiceMonitor'):
        selector = spec.get('selector') or {}
        pods = [pod_of(o)['metadata'].get('labels') or {} for o in deployments.values()]
        if not any(labels_match(selector, labels) for labels in pods):
            problems.append(f"{name(obj)}: selects no pod of the render")
        ports = {p.get('name') for o in deployments.values() for c in pod_of(o)['spec']['containers'] for p in c.get('ports') or []}
        for endpoint in spec.get('podMetricsEndpoints') or spec.get('endpoints') or []:
            if endpoint.get('port') not in ports:
                problems.append(f"{name(obj)}: port {endpoint.get('port')!r} is no container port name")
    elif kind == 'HTTPRoute':
        services = {o['metadata']['name']: o for o in objects if o['kind'] == 'Service'}
        for rule in spec.get('rules') or []:
            for ref in rule.get('backendRefs') or []:
                service = services.get(ref.get('name'))
                ports = {p['port'] for p in (service or {}).get('spec', {}).get('ports', [])}
                if service is None or ref.get('port') not in ports:
                    problems.append(f"{name(obj)}: backendRef {ref.get('name')}:{ref.get('port')} is no Service port of the render")
        for parent in spec.get('parentRefs') or []:
            if not parent.get('namespace'):
                problems.append(f"{name(obj)}: parentRef {parent.get('name')} names no namespace (the Gateway is not in the portal's)")
    elif kind in ('ClientTrafficPolicy', 'BackendTrafficPolicy'):
        routes = [o for o in objects if o['kind'] == 'HTTPRoute']
        gateways = {(p.get('namespace'), p['name']) for r in routes for p in r['spec'].get('parentRefs') or []}
        here = obj['metadata'].get('namespace')
        for ref in spec.get('targetRefs') or ([spec['targetRef']] if spec.get('targetRef') else []):
            if ref['kind'] == 'Gateway' and (here, ref['name']) not in gateways:
                problems.append(f"{name(obj)}: targets Gateway {ref['name']} in namespace {here}, which no HTTPRoute of the render attaches to ({sorted(gateways)})")
            if ref['kind'] == 'HTTPRoute' and not any(r['metadata']['name'] == ref['name'] and r['metadata'].get('namespace') == here for r in routes):
                problems.append(f"{name(obj)}: targets HTTPRoute {ref['name']}, not in the render in namespace {here}")
    elif kind == 'PrometheusRule':
        for group in spec.get('groups') or []:
            for rule in group.get('rules') or []:
                if not rule.get('expr') or not (rule.get('alert') or rule.get('record')):
                    problems.append(f"{name(obj)}: a rule of {group.get('name')} lacks expr or alert")


def check_rules(label, objects, problems):
    by_kind = {}
    for obj in objects:
        by_kind.setdefault(obj['kind'], []).append(obj)
    if 'Secret' in by_kind and not label.startswith('overlays/example'):
        problems.append(f"{label}: holds Secrets ({', '.join(name(o) for o in by_kind['Secret'])}): apply would overwrite real ones")
    scaled = {o['spec']['scaleTargetRef']['name'] for o in by_kind.get('HorizontalPodAutoscaler', [])}
    scaled |= {o['spec']['scaleTargetRef']['name'] for o in by_kind.get('ScaledObject', [])}
    present = {(o['kind'], o['metadata']['name']) for o in objects}
    for obj in objects:
        pod = pod_of(obj)
        if pod is None:
            continue
        spec = pod['spec']
        if obj['kind'] == 'Deployment' and obj['metadata']['name'] in scaled and 'replicas' in obj['spec']:
            problems.append(f"{label}: {name(obj)} sets spec.replicas but an autoscaler manages it")
        if spec.get('automountServiceAccountToken') is not False:
            problems.append(f"{label}: {name(obj)} mounts a service account token")
        scratch = {v['name'] for v in spec.get('volumes') or [] if 'emptyDir' in v}
        for volume in spec.get('volumes') or []:
            if 'emptyDir' in volume and 'sizeLimit' not in (volume['emptyDir'] or {}):
                problems.append(f"{label}: {name(obj)} volume {volume['name']} has no sizeLimit")
        for container in spec['containers']:
            image = container['image']
            tag = image.rsplit('/', 1)[-1].partition(':')[2]
            if label.startswith('overlays/') and (not tag or tag == 'latest'):
                problems.append(f"{label}: {name(obj)} image {image} has no version tag")
            mounts = {m['name'] for m in container.get('volumeMounts') or []}
            if mounts & scratch and 'ephemeral-storage' not in ((container.get('resources') or {}).get('requests') or {}):
                problems.append(f"{label}: {name(obj)} container {container['name']} requests no ephemeral-storage for its scratch volume")
            for source in container.get('envFrom') or []:
                for kind, key in (('ConfigMap', 'configMapRef'), ('Secret', 'secretRef')):
                    ref = source.get(key)
                    # Secrets are made by hand before the apply, except by the example overlay.
                    checked = kind == 'ConfigMap' or label.startswith('overlays/example')
                    if ref and checked and not ref.get('optional') and (kind, ref['name']) not in present:
                        problems.append(f"{label}: {name(obj)} refers to {kind}/{ref['name']}, not in the render")
    # Every object of the portal in the portal's namespace (a component's objects too: a custom
    # resource without one would land in whatever namespace kubectl's context names), except a
    # ClientTrafficPolicy, which lives beside its Gateway.
    home = {o['metadata'].get('namespace') for o in by_kind.get('Deployment', [])}
    for obj in objects:
        if obj['kind'] in ('Namespace', 'ClientTrafficPolicy'):
            continue
        if obj['metadata'].get('namespace') not in home:
            problems.append(f"{label}: {name(obj)} is in namespace {obj['metadata'].get('namespace')!r}, not the portal's ({', '.join(map(str, home))})")
    pods = [pod_of(o)['metadata'].get('labels') or {} for o in objects if pod_of(o)]
    for policy in by_kind.get('NetworkPolicy', []):
        selector = policy['spec']['podSelector']
        if selector and not any(labels_match(selector, labels) for labels in pods):
            problems.append(f"{label}: {name(policy)} selects no pod")
    for pdb in by_kind.get('PodDisruptionBudget', []):
        if 'maxUnavailable' not in pdb['spec']:
            problems.append(f"{label}: {name(pdb)} sets no maxUnavailable (minAvailable lets a drain take all but that many at once)")
    for hpa in by_kind.get('HorizontalPodAutoscaler', []):
        if ('Deployment', hpa['spec']['scaleTargetRef']['name']) not in present:
            problems.append(f"{label}: {name(hpa)} scales a Deployment that is not in the render")


def floors(objects):
    """Deployment name -> the autoscaler's minimum."""
    out = {}
    for o in objects:
        if o['kind'] == 'HorizontalPodAutoscaler':
            out[o['spec']['scaleTargetRef']['name']] = o['spec'].get('minReplicas', 1)
        elif o['kind'] == 'ScaledObject':
            out[o['spec']['scaleTargetRef']['name']] = o['spec'].get('minReplicaCount', 0)
    return out


def check_floors(label, objects, plain, problems):
    """A component never lowers the overlay's autoscaling floor: the Deployment (or, when a
    component splits it, the largest of its parts <name>-*) keeps at least the minimum it had."""
    have = floors(objects)
    for deployment, minimum in floors(plain).items():
        kept = [m for d, m in have.items() if d == deployment or d.startswith(deployment + '-')]
        if kept and max(kept) < minimum:
            problems.append(f"{label}: the autoscaling floor of {deployment} fell from {minimum} to {max(kept)}")


SEEN = {}


def schema_problems(obj, version, crds):
    """The schema's complaints about one object, each distinct object validated once (most
    objects are the same in many renders)."""
    key = (json.dumps(obj, sort_keys=True), version)
    if key in SEEN:
        return SEEN[key]
    found = []
    if obj['apiVersion'].split('/')[0] in CUSTOM_GROUPS:
        known = crds.get((obj['apiVersion'], obj['kind']))
        if known is None:
            found.append(f"{name(obj)} ({obj['apiVersion']}): no CustomResourceDefinition given for it")
        else:
            for e in sorted(known[0].iter_errors(obj), key=lambda e: list(e.path)):
                where = '.'.join(str(p) for p in e.path)
                found.append(f"{name(obj)} is invalid for its CRD ({obj['apiVersion']}): {where}: {e.message}")
    else:
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except ValidationError as e:
            where = '.'.join(str(p) for p in e.path)
            found.append(f"{name(obj)} is invalid for Kubernetes {version}: {where}: {e.message}")
        except SchemaNotFoundError:
            found.append(f"{name(obj)} ({obj['apiVersion']}) has no schema for Kubernetes {version}")
    SEEN[key] = found
    return found


def main():
    args = sys.argv[1:]
    crds = load_crds([a.partition('=')[2] for a in args if a.startswith('--crd=')])
    args = [a for a in args if not a.startswith('--crd=')]
    versions = args[0].split(',')
    problems = []
    plain = {}
    for arg in args[1:]:
        label, _, path = arg.partition('=')
        with open(path) as f:
            objects = [o for o in yaml.safe_load_all(f) if o]
        target = label.split(' + ')[0]
        if target == label:
            plain[target] = objects
        elif target in plain:
            check_floors(label, objects, plain[target], problems)
        custom = []
        for obj in objects:
            if obj['apiVersion'].split('/')[0] in CUSTOM_GROUPS:
                problems.extend(f"{label}: {p}" for p in schema_problems(obj, None, crds))
                known = crds.get((obj['apiVersion'], obj['kind']))
                cel = known[1] if known else 0
                custom.append(f"{name(obj)}" + (f" ({cel} CEL rules not evaluated)" if cel else ''))
                found = []
                check_custom(obj, objects, found)
                problems.extend(f"{label}: {p}" for p in found)
                continue
            for version in versions:
                problems.extend(f"{label}: {p}" for p in schema_problems(obj, version, crds))
        check_rules(label, objects, problems)
        note = f"; {len(custom)} custom resources valid for their CRDs: {', '.join(custom)}" if custom else ''
        print(f"k8s: {label}: {len(objects) - len(custom)} objects valid for Kubernetes {', '.join(versions)}{note}")
    for problem in problems:
        print(f"k8s: PROBLEM {problem}")
    sys.exit(1 if problems else 0)


main()
