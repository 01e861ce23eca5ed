import Type from 'typebox'

/** A PDF's document information, as PDF readers show it in its properties (merge-pdf, edit-pdf). */
export function documentInfoSchema(description: string) {
  return Type.Object(
    {
      title: Type.Optional(Type.String({ maxLength: 1000 })),
      author: Type.Optional(Type.String({ maxLength: 1000 })),
      subject: Type.Optional(Type.String({ maxLength: 1000 })),
      keywords: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 50 })),
      creator: Type.Optional(Type.String({ maxLength: 1000 })),
      producer: Type.Optional(Type.String({ maxLength: 1000 })),
    },
    { additionalProperties: false, description },
  )
}

/** The document information fields, as the schema names them. */
export interface DocumentInfo {
  title?: string
  author?: string
  subject?: string
  keywords?: string[]
  creator?: string
  producer?: string
}
