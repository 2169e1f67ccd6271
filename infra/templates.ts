import * as fs from "fs";
import * as path from "path";
import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { EmailTemplate, FolderReader, readTemplateFolder } from "./core/plan/templates";

export interface EmailTemplatesArgs {
  /**
   * The folder of templates, relative to the project: one subfolder per template, `<name>/subject.txt`, `body.html`
   * and `body.txt` (SES's Handlebars).
   * @example "templates"
   */
  dir: string;
}

/**
 * The stack's SES templates, one per folder of `dir`, created or updated by `pulumi up`. @pulumi/aws has no SES v2
 * template resource; `aws.ses.Template` (the SES v1 CreateTemplate API) makes the templates SES v2 SendEmail reads by
 * name (Content.Template.TemplateName): SES keeps one store of templates per account and Region for both APIs.
 */
export class EmailTemplates extends pulumi.ComponentResource {
  /** The deployed templates' names, known when the program runs (the roles are scoped to them). */
  public readonly names: string[];
  public readonly templates: aws.ses.Template[];

  constructor(name: string, args: EmailTemplatesArgs, opts?: pulumi.ComponentResourceOptions) {
    super("sendtime:index:EmailTemplates", name, {}, opts);
    const parent = this;

    const sources = [...readTemplateFolder(args.dir, fileSystem).values()];
    this.templates = sources.map(createTemplate);
    this.names = sources.map((t) => t.name);
    this.registerOutputs({ names: this.names });

    function createTemplate(t: EmailTemplate) {
      return new aws.ses.Template(
        `${name}-${t.name}`,
        { name: t.name, subject: t.subject, html: t.html, text: t.text },
        { parent },
      );
    }
  }
}

/** The local file system, as the template reader takes it. */
export const fileSystem: FolderReader = {
  exists: (p) => fs.existsSync(p),
  list: (p) => fs.readdirSync(p, { withFileTypes: true }).map((e) => ({ name: e.name, isFolder: e.isDirectory() })),
  read: (p) => fs.readFileSync(path.normalize(p), "utf8"),
};
