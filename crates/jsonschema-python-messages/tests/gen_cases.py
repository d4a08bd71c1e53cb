# Makes cases.json, the expected texts of python_cases.rs: Python's own
# jsonschema (4.26.0 here) on each case. Run it with a Python that has
# jsonschema installed: python gen_cases.py > cases.json
import json, sys
import jsonschema
from jsonschema import FormatChecker
cases = [
 # (name, schema, instance)
 ("required", {"type":"object","properties":{"name":{"type":"string","maxLength":8}},"required":["name"],"additionalProperties":False}, {"nom":"a"}),
 ("additional_one", {"type":"object","properties":{"name":{"type":"string"}},"additionalProperties":False}, {"name":"a","bad_field":1}),
 ("additional_many", {"type":"object","properties":{"name":{"type":"string"}},"additionalProperties":False}, {"zz":1,"name":"a","b":2}),
 ("required_before_additional", {"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":False}, {"bad":1}),
 ("additional_first", {"type":"object","additionalProperties":False,"properties":{"name":{"type":"string"}},"required":["name"]}, {"bad":1}),
 ("minimum", {"type":"object","properties":{"total":{"type":"integer","minimum":1}}}, {"total":0}),
 ("maximum", {"type":"integer","maximum":2147483647}, 2147483648),
 ("maximum_float", {"type":"number","maximum":1.5}, 2.25),
 ("exclusive_min", {"exclusiveMinimum":0}, 0),
 ("exclusive_max", {"exclusiveMaximum":10}, 10.0),
 ("type_integer", {"type":"object","properties":{"total":{"type":"integer"}}}, {"total":"x"}),
 ("type_integer_float", {"type":"integer"}, 1.5),
 ("type_integer_float_ok", {"type":"integer"}, 2.0),
 ("type_bool_not_int", {"type":"integer"}, True),
 ("type_list", {"type":["integer","null"]}, "x"),
 ("type_array", {"type":"object","properties":{"mappings":{"type":"object","additionalProperties":{"type":"array","items":{"type":"string"}}}}}, {"mappings":{"beta":"x"}}),
 ("pattern", {"type":"object","properties":{"consumer_type":{"type":"string","pattern":"^[A-Z0-9_]+$","minLength":1,"maxLength":255}}}, {"consumer_type":"instance"}),
 ("pattern_trailing_newline_ok", {"type":"string","pattern":"^[A-Z0-9_]+$"}, "ABC\n"),
 ("pattern_custom", {"type":"object","properties":{"name":{"type":"string","pattern":"^CUSTOM_[A-Z0-9_]+$","maxLength":255}},"required":["name"],"additionalProperties":False}, {"name":"FOO"}),
 ("maxlength", {"type":"string","maxLength":3}, "abcd"),
 ("maxlength0", {"type":"string","maxLength":0}, "a"),
 ("minlength1", {"type":"object","properties":{"project_id":{"type":"string","minLength":1,"maxLength":255}}}, {"project_id":""}),
 ("minlength2", {"type":"string","minLength":2}, "a"),
 ("minprops1", {"type":"object","minProperties":1}, {}),
 ("minprops2", {"type":"object","minProperties":2}, {"a":1}),
 ("maxprops0", {"type":"object","maxProperties":0}, {"a":1}),
 ("maxprops1", {"type":"object","maxProperties":1}, {"a":1,"b":2}),
 ("minitems1", {"type":"array","minItems":1}, []),
 ("minitems2", {"type":"array","minItems":2}, [1]),
 ("maxitems0", {"type":"array","maxItems":0}, [1]),
 ("maxitems1", {"type":"array","maxItems":1}, [1,2]),
 ("unique", {"type":"array","uniqueItems":True}, [1,2,1.0]),
 ("unique_bool", {"type":"array","uniqueItems":True}, [1,True]),
 ("enum", {"enum":["a","b",1]}, "c"),
 ("enum_num", {"enum":[1,2]}, 1.0),
 ("const", {"const":{"a":[1,None]}}, {"a":[1]}),
 ("regexes_one", {"type":"object","patternProperties":{"^[0-9a-fA-F-]{36}$":{"type":"object"}},"additionalProperties":False,"minProperties":1}, {"not-a-uuid":{}}),
 ("regexes_many", {"type":"object","patternProperties":{"^[A-Z0-9_]+$":{"type":"integer"},"^x":{}},"additionalProperties":False}, {"b":1,"a":2}),
 ("pattern_props_descend", {"type":"object","patternProperties":{"^[A-Z0-9_]+$":{"type":"integer","minimum":1}},"additionalProperties":False}, {"VCPU":0}),
 ("format_uuid", {"type":"array","items":{"type":"string","format":"uuid"}}, ["a","not-a-uuid"]),
 ("format_uuid_nodash", {"type":"string","format":"uuid"}, "0123456789abcdef0123456789abcdef"),
 ("format_uuid_ok", {"type":"string","format":"uuid"}, "01234567-89ab-cdef-0123-456789abcdef"),
 ("format_ipv4", {"format":"ipv4"}, "1.2.3.04"),
 ("format_date", {"format":"date"}, "2021-02-29"),
 ("format_unknown", {"format":"whatever"}, "x"),
 ("items_false", {"prefixItems":[{"type":"integer"}],"items":False}, [1,2,3]),
 ("items_false_one", {"prefixItems":[{"type":"integer"}],"items":False}, [1,"x"]),
 ("prefix", {"prefixItems":[{"type":"integer"},{"type":"string"}]}, [1,2]),
 ("anyof", {"anyOf":[{"type":"string"},{"type":"integer","minimum":5}]}, 3),
 ("anyof_tie", {"anyOf":[{"type":"string"},{"type":"integer"}]}, None),
 ("anyof_nested", {"type":"object","properties":{"allocations":{"anyOf":[{"type":"array","minItems":1},{"type":"object","minProperties":1}]}}}, {"allocations":{}}),
 ("oneof_none", {"oneOf":[{"type":"string"},{"type":"boolean"}]}, 3),
 ("oneof_many", {"oneOf":[{"type":"integer"},{"minimum":0},{"maximum":10}]}, 3),
 ("allof", {"allOf":[{"type":"integer"},{"minimum":5}]}, 3),
 ("not", {"not":{"type":"string"}}, "x"),
 ("if_then", {"if":{"type":"integer"},"then":{"minimum":5},"else":{"type":"string"}}, 3),
 ("if_else", {"if":{"type":"integer"},"then":{"minimum":5},"else":{"type":"string"}}, None),
 ("false_schema", {"properties":{"x":False}}, {"x":1}),
 ("false_root", False, 1),
 ("multiple_int", {"multipleOf":3}, 7),
 ("multiple_float", {"multipleOf":0.5}, 0.75),
 ("dep_required", {"dependentRequired":{"a":["b","c"]}}, {"a":1,"c":2}),
 ("dep_schemas", {"dependentSchemas":{"a":{"required":["z"]}}}, {"a":1}),
 ("property_names", {"propertyNames":{"maxLength":2}}, {"abc":1}),
 ("contains_none", {"contains":{"type":"string"}}, [1,2]),
 ("contains_few", {"contains":{"type":"string"},"minContains":2}, ["a",2]),
 ("contains_many", {"contains":{"type":"string"},"maxContains":1}, ["a","b"]),
 ("deeper_loses", {"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"integer"}}}},"required":["c"]}, {"a":{"b":"x"}}),
 ("siblings_later_wins", {"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}}}, {"a":"x","b":"y"}),
 ("type_mismatch_pref", {"type":"object","properties":{"a":{"type":"string","minLength":3},"b":{"type":"integer"}}}, {"a":"x"}),
 ("long_schema", {"type":"object","properties":{"resource_provider_generation":{"type":"integer"},"inventories":{"type":"object","patternProperties":{"^[A-Z0-9_]+$":{"type":"object","properties":{"total":{"type":"integer","maximum":2147483647,"minimum":1},"reserved":{"type":"integer","maximum":2147483647,"minimum":0},"min_unit":{"type":"integer","maximum":2147483647,"minimum":1},"max_unit":{"type":"integer","maximum":2147483647,"minimum":1},"step_size":{"type":"integer","maximum":2147483647,"minimum":1},"allocation_ratio":{"type":"number","maximum":3.40282e+38}},"required":["total"],"additionalProperties":False}},"additionalProperties":False}},"required":["inventories","resource_provider_generation"],"additionalProperties":False}, {"resource_provider_generation":0,"inventories":{"VCPU":{"total":"x"}}}),
 ("long_schema_top", {"type":"object","properties":{"resource_provider_generation":{"type":"integer"},"inventories":{"type":"object","patternProperties":{"^[A-Z0-9_]+$":{"type":"object","properties":{"total":{"type":"integer","maximum":2147483647,"minimum":1},"reserved":{"type":"integer","maximum":2147483647,"minimum":0},"min_unit":{"type":"integer","maximum":2147483647,"minimum":1},"max_unit":{"type":"integer","maximum":2147483647,"minimum":1},"step_size":{"type":"integer","maximum":2147483647,"minimum":1},"allocation_ratio":{"type":"number","maximum":3.40282e+38}},"required":["total"],"additionalProperties":False}},"additionalProperties":False}},"required":["inventories","resource_provider_generation"],"additionalProperties":False}, {"inventories":{}}),
 ("long_string", {"type":"object","properties":{"name":{"type":"string","maxLength":20}}}, {"name":"word " * 30}),
 ("long_string_top", {"type":"string","maxLength":20}, "word " * 30),
 ("quotes", {"type":"object","properties":{"name":{"type":"string","pattern":"^a$"}}}, {"name":"it's"}),
 ("unicode", {"type":"string","maxLength":1}, "\u00e9\u00a0\u2028x"),
 ("float_repr", {"type":"integer"}, 1e+16),
 ("float_small", {"maximum":0}, 0.00001),
 ("nested_index", {"type":"object","properties":{"a":{"type":"array","items":{"type":"object","required":["x"]}}}}, {"a":[{"x":1},{"y":2}]}),
]
out = []
for name, schema, inst in cases:
    # round trip through JSON text, the way both sides read it
    s_text = json.dumps(schema); i_text = json.dumps(inst)
    schema = json.loads(s_text); inst = json.loads(i_text)
    cls = jsonschema.validators.validator_for(schema)
    v = cls(schema, format_checker=FormatChecker())
    err = jsonschema.exceptions.best_match(v.iter_errors(inst))
    out.append({"name": name, "schema": s_text, "instance": i_text, "expected": None if err is None else str(err)})
json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
